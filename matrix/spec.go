// Package matrix runs many vigil runs as one: a spec names the axes (any
// flag of vigil run, e.g. etcd-version × faults × seed), every cell of
// their product is one run in a directory of its own, and the cells'
// results, however many machines made them, are summarized as one matrix
// (matrix.json, junit.xml, matrix.html). It also writes the Kubernetes
// objects that run a matrix as an Indexed Job, one cell per index.
package matrix

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/vigil-suite/vigil/internal/redact"
)

// Spec is a matrix spec file.
type Spec struct {
	// Name names the matrix (and the Kubernetes objects of --emit).
	Name string `json:"name"`
	// Run holds vigil run flags every cell gets (e.g. duration: 20s).
	Run map[string]Scalar `json:"run,omitempty"`
	// Axes maps a vigil run flag to the values it takes; the cells are
	// their product. "seed" may be a count instead of a list (seeds 1..N).
	Axes map[string]Values `json:"axes"`
	// Parallel is how many cells run at once on one machine (0: by cores).
	Parallel int `json:"parallel,omitempty"`
	// Kubernetes configures the Indexed Job of `vigil matrix emit`.
	Kubernetes *KubeSpec `json:"kubernetes,omitempty"`
}

// Scalar is a flag's value, written in YAML as a string, number or
// boolean.
type Scalar string

// UnmarshalJSON takes a string, number or boolean.
func (s *Scalar) UnmarshalJSON(b []byte) error {
	var v Values
	if err := v.UnmarshalJSON(b); err != nil {
		return err
	}
	if len(v) != 1 {
		return fmt.Errorf("want one value, not a list of %d", len(v))
	}
	*s = Scalar(v[0])
	return nil
}

// Values is an axis' values; a YAML scalar N for seed means 1..N.
type Values []string

// UnmarshalJSON takes a list of scalars, or one scalar.
func (v *Values) UnmarshalJSON(b []byte) error {
	var list []any
	if err := json.Unmarshal(b, &list); err != nil {
		var one any
		if err := json.Unmarshal(b, &one); err != nil {
			return err
		}
		list = []any{one}
	}
	*v = nil
	for _, x := range list {
		switch x := x.(type) {
		case string:
			*v = append(*v, x)
		case float64:
			*v = append(*v, strconv.FormatFloat(x, 'f', -1, 64))
		case bool:
			*v = append(*v, strconv.FormatBool(x))
		case nil:
			*v = append(*v, "")
		default:
			return fmt.Errorf("an axis value must be a string, number or boolean, not %T", x)
		}
	}
	return nil
}

// KubeSpec is the Kubernetes side of a spec.
type KubeSpec struct {
	// Image runs the cells; it must hold vigil and, for the fixtures that
	// start servers, their binaries (see docs/matrix.md).
	Image string `json:"image,omitempty"`
	// Namespace of the objects; default "default".
	Namespace string `json:"namespace,omitempty"`
	// Parallelism is how many cells run at once; default min(cells, 4).
	Parallelism int `json:"parallelism,omitempty"`
	// BackoffLimitPerIndex is how often a cell's pod is retried when it
	// fails to run (not when the cell's verdict is fail); default 1.
	BackoffLimitPerIndex *int `json:"backoffLimitPerIndex,omitempty"`
	// ResultsClaim is the PersistentVolumeClaim the cells write their run
	// directories to; empty: an emptyDir, lost with the pod.
	ResultsClaim string `json:"resultsClaim,omitempty"`
	// Privileged runs the cells' pods privileged (--net netns needs it).
	Privileged bool `json:"privileged,omitempty"`
	// CPU and Memory are each cell's requests (and limits), e.g. "2", "4Gi".
	CPU    string `json:"cpu,omitempty"`
	Memory string `json:"memory,omitempty"`
}

// axisOrder puts the axes in a fixed order whatever the file's order: the
// system under test first, the fault mix, the seed last (the columns of
// matrix.html); other flags alphabetically in between.
var axisOrder = []string{"target", "fixture", "store", "etcd-version", "kube-version", "kine-version", "kine-backend", "members", "apiservers"}

// LoadSpec reads and checks a spec file, and returns it with the file's
// bytes (which ClaimDir and KubeYAML keep as they are). checkArgs, when
// not nil, judges each cell's vigil run command line (Args without "run"):
// a typo in a flag fails now, not in every cell.
func LoadSpec(path string, checkArgs func(args []string) error) (*Spec, []byte, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, err
	}
	s, err := ParseSpec(raw)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	if checkArgs == nil {
		return s, raw, nil
	}
	for i := range s.Cells() {
		params, _ := s.Cell(i)
		if err := checkArgs(s.Args(params)[1:]); err != nil {
			return nil, nil, fmt.Errorf("%s: cell %d (%s): %w", path, i, Label(params), err)
		}
	}
	return s, raw, nil
}

// ParseSpec parses and checks a spec.
func ParseSpec(b []byte) (*Spec, error) {
	var s Spec
	if err := yaml.UnmarshalStrict(b, &s); err != nil {
		return nil, err
	}
	// "seed: 4", a number and not a list, is seeds 1..4.
	var shape struct {
		Axes map[string]any `json:"axes"`
	}
	yaml.Unmarshal(b, &shape)
	if count, ok := shape.Axes["seed"].(float64); ok {
		if n := int(count); float64(n) == count && n > 0 && n <= 10000 {
			s.Axes["seed"] = nil
			for i := 1; i <= n; i++ {
				s.Axes["seed"] = append(s.Axes["seed"], strconv.Itoa(i))
			}
		}
	}
	return &s, s.check()
}

func (s *Spec) check() error {
	var errs []error
	if s.Name == "" || strings.Trim(s.Name, "abcdefghijklmnopqrstuvwxyz0123456789-") != "" || len(s.Name) > 40 {
		errs = append(errs, fmt.Errorf("name %q: want lower-case letters, digits and dashes, at most 40 (it names Kubernetes objects)", s.Name))
	}
	if len(s.Axes) == 0 {
		errs = append(errs, errors.New("no axes: name at least one vigil run flag with its values, e.g. axes: {seed: 4}"))
	}
	for flag, vs := range s.Axes {
		if len(vs) == 0 {
			errs = append(errs, fmt.Errorf("axis %s has no values", flag))
		}
		if _, both := s.Run[flag]; both {
			errs = append(errs, fmt.Errorf("%s is both an axis and a run flag", flag))
		}
	}
	for _, flag := range slices.Concat(slices.Collect(maps.Keys(s.Run)), s.AxisNames()) {
		if reserved(flag) {
			errs = append(errs, fmt.Errorf("--%s is vigil matrix's to set, not the spec's", flag))
		}
	}
	if n := s.Cells(); n > 100000 {
		errs = append(errs, fmt.Errorf("%d cells: at most 100000", n))
	}
	return errors.Join(errs...)
}

// reserved flags are set per cell by vigil matrix.
func reserved(flag string) bool { return flag == "out" }

// AxisNames lists the axes in the matrix's order.
func (s *Spec) AxisNames() []string {
	var names []string
	for name := range s.Axes {
		names = append(names, name)
	}
	rank := func(n string) int {
		switch i := slices.Index(axisOrder, n); {
		case i >= 0:
			return i
		case n == "faults":
			return len(axisOrder) + 2
		case n == "sabotage":
			return len(axisOrder) + 3
		case n == "seed":
			return len(axisOrder) + 4
		}
		return len(axisOrder) + 1
	}
	slices.SortFunc(names, func(a, b string) int {
		if d := rank(a) - rank(b); d != 0 {
			return d
		}
		return strings.Compare(a, b)
	})
	return names
}

// Cells is how many cells the matrix has.
func (s *Spec) Cells() int {
	n := 1
	for _, vs := range s.Axes {
		n *= len(vs)
		if n > 1<<30 {
			return n
		}
	}
	return n
}

// Param is one axis' value in a cell.
type Param struct {
	Flag  string `json:"flag"`
	Value string `json:"value"`
}

// Cell returns cell i's values, one per axis in AxisNames' order; the
// last axis varies fastest.
func (s *Spec) Cell(i int) ([]Param, error) {
	if i < 0 || i >= s.Cells() {
		return nil, fmt.Errorf("cell %d: the matrix has cells 0..%d", i, s.Cells()-1)
	}
	names := s.AxisNames()
	params := make([]Param, len(names))
	for k := len(names) - 1; k >= 0; k-- {
		vs := s.Axes[names[k]]
		params[k] = Param{Flag: names[k], Value: vs[i%len(vs)]}
		i /= len(vs)
	}
	return params, nil
}

// Args is the vigil run command line of a cell (without --out): the run
// flags, then the cell's values. An empty value leaves its flag out (an
// axis "faults: [”, kill-leader]" has a cell without faults).
func (s *Spec) Args(params []Param) []string {
	args := []string{"run"}
	for _, k := range slices.Sorted(maps.Keys(s.Run)) {
		args = append(args, "--"+k+"="+string(s.Run[k]))
	}
	for _, p := range params {
		if p.Value != "" {
			args = append(args, "--"+p.Flag+"="+p.Value)
		}
	}
	return args
}

// Label names a cell for people: its values, "faults=kill-leader seed=1".
func Label(params []Param) string {
	parts := make([]string, len(params))
	for i, p := range params {
		v := p.Value
		if v == "" {
			v = "(none)"
		}
		parts[i] = p.Flag + "=" + v
	}
	return strings.Join(parts, " ")
}

// CellDir is cell i's directory name under a matrix's cells/.
func CellDir(i int) string { return fmt.Sprintf("cell-%04d", i) }

// Redacted is the spec as a matrix's records hold it (cell.json,
// matrix.json, matrix.html): every flag's value with its credentials
// replaced as vigil run's own records replace them. The cells still run
// with the values as written; the spec file itself, copied as
// matrix.yaml, is the user's (a secret kept in the environment, as $VAR
// in --command, is in no file at all).
func (s *Spec) Redacted() *Spec {
	r := *s
	r.Run = map[string]Scalar{}
	for k, v := range s.Run {
		r.Run[k] = Scalar(redact.Flag(k, string(v)))
	}
	r.Axes = map[string]Values{}
	for k, vs := range s.Axes {
		out := make(Values, len(vs))
		for i, v := range vs {
			out[i] = redact.Flag(k, v)
		}
		r.Axes[k] = out
	}
	return &r
}

// redactedParams is params with their values redacted as in Redacted.
func redactedParams(params []Param) []Param {
	out := make([]Param, len(params))
	for i, p := range params {
		out[i] = Param{Flag: p.Flag, Value: redact.Flag(p.Flag, p.Value)}
	}
	return out
}
