## stats module: sources and tests (included from Makefile.am)
