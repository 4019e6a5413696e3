# vigil's image: its static binary alone, FROM scratch, so nothing is
# pulled from a registry. `make image` compiles the binary (CGO off) and
# builds the image from a context holding only it and this file.
#
# The image drives systems it can reach: --endpoints (etcd API) or
# --server/--kubeconfig (Kubernetes API). The fixtures that build and start
# etcd or kube-apiserver themselves need a Go toolchain and are not in it.
#
#   docker run --rm -v "$PWD/runs:/runs" vigil:latest run --endpoints etcd:2379 --out /runs/ci
FROM scratch
COPY vigil /usr/local/bin/vigil
# A writable home and working dir (scratch has no directories at all).
WORKDIR /tmp
ENV HOME=/tmp
WORKDIR /runs
ENTRYPOINT ["/usr/local/bin/vigil"]
CMD ["--help"]
