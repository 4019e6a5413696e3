# vigil: the two commands a newcomer needs are `make run` and `make test`.
GO ?= go

.PHONY: vigil run test bench vet clean conform bugs

vigil:
	$(GO) build -o vigil ./cmd/vigil

# A checked 30 s workload against a local 3-member etcd cluster (built from
# the Go module proxy on first use).
run: vigil
	./vigil run

# Unit tests and suites against real etcd processes. -p 1: the suites start
# clusters, and two at once on a 2-core machine would starve each other.
test:
	$(GO) vet ./...
	$(GO) test -p 1 -timeout 30m ./...

# The conformance probes against an etcd and a kube-apiserver (with and
# without its watch cache) vigil starts, each compared with a reference.
# The second kube-apiserver run fails, as measured: see the README.
conform: vigil
	./vigil conform
	./vigil conform --target kube
	-./vigil conform --target kube --watch-cache=false

# The known-bug matrix: every catalogued etcd bug on the release that had
# it and the release that fixed it (about 30-40 minutes on 2 cores).
bugs: vigil
	./vigil bugs run --out runs/bugs-matrix

bench:
	$(GO) test -run '^$$' -bench . -benchmem ./...

clean:
	rm -f vigil
