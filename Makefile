# vigil: the two commands a newcomer needs are `make run` and `make test`.
GO ?= go

.PHONY: vigil run test test-long bench vet clean conform bugs kine sweep fp-sweep soak soak-kube selftest image image-matrix matrix certify

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

# make test and the long suite's tests it skips (internal/longtest): every
# sabotage mode end to end, the other Kubernetes run shapes, the Docker
# image, the other Docker and interrupt cases, certify of kine, the second
# failpoint build (about 12 minutes more).
test-long:
	$(GO) vet ./...
	VIGIL_LONG=1 $(GO) test -p 1 -timeout 60m ./...

# The conformance probes against an etcd and a kube-apiserver (with and
# without its watch cache) vigil starts, each compared with a reference.
# The second kube-apiserver run fails, as measured: see the README.
conform: vigil
	./vigil conform
	./vigil conform --target kube
	-./vigil conform --target kube --watch-cache=false

# The full certify (docs/certify.md) of a single etcd member that vigil
# starts from --command: probes with their references and two 30 s runs
# with faults, on etcd and through kube-apiserver (about 5 minutes, plus
# the first builds). Must say READY (exit 0).
CERTIFY_ETCD ?= v3.6.16
certify: vigil
	e=$$(./vigil build etcd $(CERTIFY_ETCD) | tail -1) && \
	./vigil certify --out runs/certify-etcd-$(CERTIFY_ETCD) --command "$$e --data-dir {data_dir} --listen-client-urls http://127.0.0.1:{client_port} --advertise-client-urls http://127.0.0.1:{client_port} --listen-peer-urls http://127.0.0.1:0"

# The known-bug matrix: every catalogued etcd bug on the release that had
# it and the release that fixed it (about 30-40 minutes on 2 cores).
bugs: vigil
	./vigil bugs run --out runs/bugs-matrix

# The kine sweep of docs/findings/kine.md: the probes on each backend, a
# 60 s run with faults on each, and the etcd control run with the same
# workload and faults (about 10 minutes). kine fails, as measured; the
# control must pass.
KINE_FAULTS = kill-leader,pause-leader,watch-drop,compact-storm,client-reset
kine: vigil
	-./vigil conform --fixture kine --reference none --out runs/kine/conform-sqlite
	-./vigil conform --fixture kine --kine-backend postgres --reference none --out runs/kine/conform-postgres
	-./vigil conform --fixture kine --kine-backend mysql --reference none --out runs/kine/conform-mysql
	-./vigil run --fixture kine --duration 60s --seed 11 --fault-interval 8s --faults $(KINE_FAULTS) --out runs/kine/run-sqlite
	-./vigil run --fixture kine --kine-backend postgres --duration 60s --seed 11 --fault-interval 8s --faults $(KINE_FAULTS),kill-database,pause-database --out runs/kine/run-postgres
	-./vigil run --fixture kine --kine-backend mysql --duration 60s --seed 11 --fault-interval 8s --faults $(KINE_FAULTS),kill-database,pause-database --out runs/kine/run-mysql
	./vigil run --members 1 --workload kube-like --duration 60s --seed 11 --fault-interval 8s --faults $(KINE_FAULTS) --out runs/kine/control-etcd

# The healthy-run sweep: a clean etcd under faults, seed after seed; any
# verdict but PASS is a false alarm of vigil (or a finding on that
# release, to be named with its evidence). Stops at the first one.
SWEEP_SEEDS ?= 1 2 3 4 5 6
SWEEP_FAULTS ?= kill-leader,pause-leader,kill-follower,pause-follower,isolate-follower,watch-drop,client-reset
SWEEP_ETCD ?= v3.7.3
sweep: vigil
	mkdir -p runs/sweep
	for s in $(SWEEP_SEEDS); do \
	  ./vigil run --members 3 --etcd-version $(SWEEP_ETCD) --duration 20s --seed $$s --fault-interval 4s \
	    --faults $(SWEEP_FAULTS) --out runs/sweep/$(SWEEP_ETCD)-seed$$s > runs/sweep/seed$$s.txt 2>&1 \
	    || { tail -40 runs/sweep/seed$$s.txt; exit 1; }; \
	  grep '^verdict' runs/sweep/seed$$s.txt; \
	done

# The false-alarm sweep: healthy runs by the hundred through vigil matrix
# (each spec can run as a Kubernetes Indexed Job instead: --emit
# kubernetes) — 100 of a 3-member etcd, 50 of 2 kube-apiservers over 3
# members, 30 of 5 members, 30 in Docker mode, all under faults (about 3
# hours here) — then the table of runs, false alarms and the 95% upper
# bound on the rate (docs/benchmarks.md). Run again, it resumes.
FP_OUT ?= runs/fp
fp-sweep: vigil
	-./vigil matrix run docs/examples/fp-etcd3.yaml --out $(FP_OUT)/etcd3
	-./vigil matrix run docs/examples/fp-kube.yaml --out $(FP_OUT)/kube
	-./vigil matrix run docs/examples/fp-etcd5.yaml --out $(FP_OUT)/etcd5
	-./vigil matrix run docs/examples/fp-docker.yaml --out $(FP_OUT)/docker
	./vigil matrix rate $(FP_OUT)/etcd3 $(FP_OUT)/kube $(FP_OUT)/etcd5 $(FP_OUT)/docker | tee $(FP_OUT)/rate.md

# A soak run: one long run with faults, judged while it runs (the live
# judge) and stopped at the first violation (--fail-fast); its history is
# written compressed as recorded and its report stays small. SOAK_DURATION
# (1h) and SOAK_SEED set its length and seed. GNU time (Debian's time
# package), where installed, reports its peak memory.
SOAK_DURATION ?= 1h
SOAK_SEED ?= 9
SOAK_FAULTS ?= kill-leader,pause-follower,isolate-follower,watch-drop,compact-storm
soak: vigil
	$$([ -x /usr/bin/time ] && echo /usr/bin/time -v) ./vigil run --members 3 --duration $(SOAK_DURATION) --seed $(SOAK_SEED) --fault-interval 15s \
	  --faults $(SOAK_FAULTS) --fail-fast --out runs/soak-$(SOAK_SEED)

# The Kubernetes soak: kube-apiserver, two replicas over three etcd
# members, with faults of both, judged in segments as it runs and stopped
# at the first violation. SOAK_KUBE_DURATION (1h), SOAK_KUBE_SEED and
# SOAK_KUBE_FAULTS set it; GNU time, where installed, reports its peak
# memory (the largest of vigil, the API servers and the members).
SOAK_KUBE_DURATION ?= 1h
SOAK_KUBE_SEED ?= 9
SOAK_KUBE_FAULTS ?= kill-apiserver,restart-apiserver,kill-leader,compact-storm
soak-kube: vigil
	$$([ -x /usr/bin/time ] && echo /usr/bin/time -v) ./vigil run --target kube --apiservers 2 --members 3 \
	  --duration $(SOAK_KUBE_DURATION) --seed $(SOAK_KUBE_SEED) --fault-interval 15s \
	  --faults $(SOAK_KUBE_FAULTS) --fail-fast --out runs/soak-kube-$(SOAK_KUBE_SEED)

# The self-test: 3,000 corruptions of the saved run of a real 3-member etcd
# and 1,761 of the saved kube-apiserver run (about 2 minutes); every miss
# must be argued.
selftest: vigil
	./vigil selftest checkers/testdata/etcd-v3.6.16-faults.jsonl.gz --per-kind 200
	./vigil selftest checkers/kube/testdata/kube-v1.36.3-faults.jsonl.gz --per-kind 200

# vigil's container image (see Dockerfile): the static binary FROM scratch,
# tagged vigil:latest and vigil:<version>. Nothing is pulled.
IMAGE ?= vigil
image:
	rm -rf build/image && mkdir -p build/image
	CGO_ENABLED=0 $(GO) build -trimpath -o build/image/vigil ./cmd/vigil
	cp Dockerfile build/image/
	docker build -t $(IMAGE):latest -t $(IMAGE):$$(build/image/vigil version | cut -d' ' -f2) build/image

# The image a matrix's pods run (Dockerfile.matrix): vigil's image plus
# the etcd releases of ETCD_VERSIONS, built from the Go module proxy.
ETCD_VERSIONS ?= v3.7.3
image-matrix: image vigil
	rm -rf build/matrix-image && mkdir -p build/matrix-image/bin
	for v in $(ETCD_VERSIONS); do \
		p=$$(./vigil build etcd $$v | tail -1) && cp -r "$$(dirname "$$p")" build/matrix-image/bin/ || exit 1; \
	done
	cp Dockerfile.matrix build/matrix-image/Dockerfile
	docker build -t $(IMAGE)-matrix:latest build/matrix-image

# A nightly chaos matrix (docs/examples/nightly.yaml: 2 cluster sizes x 3
# fault mixes x 4 seeds, about 20 minutes); run it again to resume.
matrix: vigil
	./vigil matrix run docs/examples/nightly.yaml --out runs/matrix-nightly

bench:
	$(GO) test -run '^$$' -bench . -benchmem ./...

clean:
	rm -rf vigil build
