package matrix

import (
	"testing"

	. "github.com/onsi/gomega"
	batchv1 "k8s.io/api/batch/v1"
)

func TestKubeObjects(t *testing.T) {
	g := NewWithT(t)
	raw := []byte("name: nightly\naxes: {seed: 6}\nkubernetes: {image: reg/vigil:1, resultsClaim: res, privileged: true, cpu: '2', memory: 4Gi, backoffLimitPerIndex: 0}\n")
	spec, err := ParseSpec(raw)
	g.Expect(err).NotTo(HaveOccurred())
	cm, job, err := KubeObjects(spec, raw)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(cm.Data[podSpecFile]).To(Equal(string(raw)))
	g.Expect(*job.Spec.CompletionMode).To(Equal(batchv1.IndexedCompletion))
	g.Expect(*job.Spec.Completions).To(BeEquivalentTo(6))
	g.Expect(*job.Spec.Parallelism).To(BeEquivalentTo(4))
	g.Expect(*job.Spec.BackoffLimitPerIndex).To(BeEquivalentTo(0))
	pod := job.Spec.Template.Spec
	g.Expect(pod.Containers[0].Image).To(Equal("reg/vigil:1"))
	g.Expect(pod.Containers[0].Args).To(Equal([]string{"matrix", "cell", "--spec", "/etc/vigil/matrix.yaml", "--out", "/results"}))
	g.Expect(*pod.Containers[0].SecurityContext.Privileged).To(BeTrue())
	g.Expect(pod.Containers[0].Resources.Limits.Memory().String()).To(Equal("4Gi"))
	g.Expect(pod.Volumes[1].PersistentVolumeClaim.ClaimName).To(Equal("res"))
	g.Expect(pod.Volumes[0].ConfigMap.Name).To(Equal(cm.Name))

	bad, _ := ParseSpec([]byte("name: x\naxes: {seed: 1}\nkubernetes: {memory: lots}\n"))
	_, _, err = KubeObjects(bad, nil)
	g.Expect(err).To(MatchError(ContainSubstring(`memory "lots"`)))
}
