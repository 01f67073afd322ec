## tests/deploy: the scale-out recipes of deploy/ run on this machine.
## Included from Makefile.am.
## Kubernetes without a cluster: the manifests' required fields and secrets, the pods' exact
## command lines run against yangblast serve, the merge Job; the Containerfile's package lists.
SH_TESTS += tests/deploy/kubernetes.sh
EXTRA_DIST += tests/deploy/local.mk tests/deploy/kubernetes.sh tests/deploy/k8s_local.py \
	deploy/kubernetes/Containerfile deploy/kubernetes/README.md deploy/kubernetes/config.yaml \
	deploy/kubernetes/reports-pvc.yaml deploy/kubernetes/shards-job.yaml \
	deploy/kubernetes/merge-job.yaml deploy/kubernetes/kustomization.yaml .containerignore
## One machine, several network namespaces: K shards with a common --start-at against serve in a
## target namespace; the merge = the server's counts = a single run; percentiles = the shards' logs;
## the target saw K source addresses (capture; nginx access log for RESTCONF).  Needs root (skipped otherwise).
SH_TESTS += tests/deploy/scaleout.sh
EXTRA_DIST += tests/deploy/scaleout.sh tests/deploy/netns.sh
## deploy/ansible/shards.yml for real: three inventory hosts (ansible_connection=local), each shard in
## its own network namespace (yb_netns), reports fetched and merged; a shard index twice is refused.
SH_TESTS += tests/deploy/ansible.sh
EXTRA_DIST += tests/deploy/ansible.sh deploy/ansible/shards.yml deploy/ansible/inventory.example.ini \
	deploy/ansible/run.example.yml deploy/ansible/README.md
