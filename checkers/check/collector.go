package check

// Collector keeps up to max violations (all of them when max <= 0) and
// counts every one it was given.
type Collector struct {
	max   int
	Kept  []Violation
	Total int
}

func NewCollector(cfg Config) *Collector {
	return &Collector{max: cfg.MaxViolations, Kept: []Violation{}}
}

func (c *Collector) Add(v Violation) {
	c.Total++
	if c.max <= 0 || len(c.Kept) < c.max {
		c.Kept = append(c.Kept, v)
	}
}

// Result folds the collected violations into a Result: fail if there was
// any, pass otherwise. The total count goes into the figures.
func (c *Collector) Result(name string, figures map[string]float64) Result {
	if figures == nil {
		figures = map[string]float64{}
	}
	figures["violations"] = float64(c.Total)
	v := Pass
	if c.Total > 0 {
		v = Fail
	}
	return Result{Name: name, Verdict: v, Violations: c.Kept, Figures: figures}
}

func Inconclusive(name, reason string, figures map[string]float64) Result {
	return Result{Name: name, Verdict: Unknown, Reason: reason, Violations: []Violation{}, Figures: figures}
}

func Limitation(name, reason string, figures map[string]float64) Result {
	return Result{Name: name, Verdict: Documented, Reason: reason, Violations: []Violation{}, Figures: figures}
}

func Skip(name, reason string, figures map[string]float64) Result {
	return Result{Name: name, Verdict: Skipped, Reason: reason, Violations: []Violation{}, Figures: figures}
}
