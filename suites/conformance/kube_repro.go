package conformance

// kubeReproData is what a Kubernetes probe's reproduction is written
// from: its raw requests and answers, and its namespace.
type kubeReproData struct {
	steps []kubeStep
	ns    string
}
