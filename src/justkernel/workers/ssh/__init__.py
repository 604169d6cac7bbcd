"""The SSH worker backend: jobs run on a remote host over SSH (`executor`), through one
long-lived worker session per host (`session`, `transport`), with the lab's own code shipped
when the host lacks the package (`bundle`)."""
