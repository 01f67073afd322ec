// captures/RestconfClient.java -- the Java client of the restconf-tls12-java
// capture (see captures/record.sh): JSSE's HttpsURLConnection, trusting only
// the server's self-signed certificate, sends a RESTCONF POST with a JSON
// body (HttpURLConnection has no PATCH) and then a GET, for which it opens a
// second connection that resumes the TLS session.  The protocol and suite
// come from the command line (-Djdk.tls.client.protocols=TLSv1.2,
// -Djdk.tls.client.cipherSuites=TLS_RSA_WITH_AES_128_CBC_SHA256).
//
//   java captures/RestconfClient.java CERT.pem BASEURL
import java.io.FileInputStream;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.security.KeyStore;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import javax.net.ssl.HttpsURLConnection;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;

public class RestconfClient {
    static int request(SSLContext ctx, String url, String method, String body) throws Exception {
        HttpsURLConnection c = (HttpsURLConnection) new URL(url).openConnection();
        c.setSSLSocketFactory(ctx.getSocketFactory());
        c.setRequestProperty("Accept", "application/yang-data+json");
        c.setRequestMethod(method);
        if (body != null) {
            c.setDoOutput(true);
            c.setRequestProperty("Content-Type", "application/yang-data+json");
            byte[] b = body.getBytes(StandardCharsets.UTF_8);
            c.setFixedLengthStreamingMode(b.length);
            try (OutputStream o = c.getOutputStream()) {
                o.write(b);
            }
        }
        int status = c.getResponseCode();
        // Read the whole response so that the connection goes back to the
        // keep-alive cache for the next request.
        InputStream in = status < 400 ? c.getInputStream() : c.getErrorStream();
        if (in != null) {
            try (in) {
                in.readAllBytes();
            }
        }
        return status;
    }

    public static void main(String[] args) throws Exception {
        CertificateFactory cf = CertificateFactory.getInstance("X.509");
        X509Certificate cert;
        try (FileInputStream f = new FileInputStream(args[0])) {
            cert = (X509Certificate) cf.generateCertificate(f);
        }
        KeyStore ks = KeyStore.getInstance(KeyStore.getDefaultType());
        ks.load(null, null);
        ks.setCertificateEntry("server", cert);
        TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
        tmf.init(ks);
        SSLContext ctx = SSLContext.getInstance("TLSv1.2");
        ctx.init(null, tmf.getTrustManagers(), null);
        String base = args[1];
        System.out.println(request(ctx, base + "/restconf/data/openconfig-acl:acl/acl-sets", "POST",
                "{\"openconfig-acl:acl-set\":[{\"name\":\"J1\",\"type\":\"ACL_IPV4\"}]}"));
        System.out.println(request(ctx, base + "/restconf/data/openconfig-acl:acl?depth=2", "GET", null));
    }
}
