package matrix

import (
	"bytes"
	"fmt"
	"path"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"
)

// In the pods of the Indexed Job: where the spec is mounted and where the
// cells write their run dirs.
const (
	podSpecDir    = "/etc/vigil"
	podSpecFile   = "matrix.yaml"
	podResultsDir = "/results"
)

// KubeObjects are the objects that run a matrix on Kubernetes: a
// ConfigMap holding the spec and an Indexed Job whose index i runs cell i
// (`vigil matrix cell`, which reads JOB_COMPLETION_INDEX), each pod
// writing its cell's dir under the results volume.
func KubeObjects(spec *Spec, specYAML []byte) (*corev1.ConfigMap, *batchv1.Job, error) {
	k := KubeSpec{}
	if spec.Kubernetes != nil {
		k = *spec.Kubernetes
	}
	if k.Image == "" {
		k.Image = "vigil:latest"
	}
	if k.Namespace == "" {
		k.Namespace = "default"
	}
	cells := int32(spec.Cells())
	if k.Parallelism <= 0 {
		k.Parallelism = int(min(cells, 4))
	}
	backoff := int32(1)
	if k.BackoffLimitPerIndex != nil {
		backoff = int32(*k.BackoffLimitPerIndex)
	}
	name := "vigil-matrix-" + spec.Name
	labels := map[string]string{"app.kubernetes.io/name": "vigil", "vigil.dev/matrix": spec.Name}
	cm := &corev1.ConfigMap{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: k.Namespace, Labels: labels},
		Data:       map[string]string{podSpecFile: string(specYAML)},
	}
	results := corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}
	if k.ResultsClaim != "" {
		results = corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: k.ResultsClaim}}
	}
	container := corev1.Container{
		Name:  "cell",
		Image: k.Image,
		// JOB_COMPLETION_INDEX, set by the Job controller, picks the cell.
		Args: []string{"matrix", "cell", "--spec", path.Join(podSpecDir, podSpecFile), "--out", podResultsDir},
		VolumeMounts: []corev1.VolumeMount{
			{Name: "spec", MountPath: podSpecDir, ReadOnly: true},
			{Name: "results", MountPath: podResultsDir},
		},
	}
	if k.Privileged {
		container.SecurityContext = &corev1.SecurityContext{Privileged: new(true)}
	}
	if k.CPU != "" || k.Memory != "" {
		rl := corev1.ResourceList{}
		for res, q := range map[corev1.ResourceName]string{corev1.ResourceCPU: k.CPU, corev1.ResourceMemory: k.Memory} {
			if q == "" {
				continue
			}
			v, err := resource.ParseQuantity(q)
			if err != nil {
				return nil, nil, fmt.Errorf("kubernetes %s %q: %w", res, q, err)
			}
			rl[res] = v
		}
		container.Resources = corev1.ResourceRequirements{Requests: rl, Limits: rl}
	}
	job := &batchv1.Job{
		TypeMeta:   metav1.TypeMeta{APIVersion: "batch/v1", Kind: "Job"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: k.Namespace, Labels: labels},
		Spec: batchv1.JobSpec{
			CompletionMode:       new(batchv1.IndexedCompletion),
			Completions:          new(cells),
			Parallelism:          new(int32(k.Parallelism)),
			BackoffLimitPerIndex: new(backoff),
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{
					// A failed cell is a verdict, not a pod to restart;
					// backoffLimitPerIndex retries pods that could not run.
					RestartPolicy: corev1.RestartPolicyNever,
					Containers:    []corev1.Container{container},
					Volumes: []corev1.Volume{
						{Name: "spec", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
							LocalObjectReference: corev1.LocalObjectReference{Name: name}}}},
						{Name: "results", VolumeSource: results},
					},
				},
			},
		},
	}
	return cm, job, nil
}

// KubeYAML is the objects as one YAML stream, for kubectl apply -f.
func KubeYAML(spec *Spec, specYAML []byte) ([]byte, error) {
	cm, job, err := KubeObjects(spec, specYAML)
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	for i, obj := range []any{cm, job} {
		y, err := yaml.Marshal(obj)
		if err != nil {
			return nil, err
		}
		if i > 0 {
			b.WriteString("---\n")
		}
		b.Write(y)
	}
	return b.Bytes(), nil
}
