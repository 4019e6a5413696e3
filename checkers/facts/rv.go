package facts

import "strconv"

// ParseRV reads a resourceVersion as kube/rv-format requires it: a
// positive decimal integer without leading zeros (the form
// k8s.io/apimachinery's resourceversion.CompareResourceVersion accepts).
// Integers too long for an int64 are well-formed but not comparable here.
func ParseRV(s string) (int64, bool) {
	if !WellFormedRV(s) || len(s) > 18 {
		return 0, false
	}
	n, err := strconv.ParseInt(s, 10, 64)
	return n, err == nil
}

func WellFormedRV(s string) bool {
	if s == "" || s[0] == '0' {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
