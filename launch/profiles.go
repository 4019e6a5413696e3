package launch

import (
	"strings"

	"github.com/vigil-suite/vigil/checkers/check"
	"github.com/vigil-suite/vigil/fixtures/kine"
)

// LimitationSetKine names, for --limitation, every limitation kine
// documents (what --limitations kine meant); LimitationNone declares none.
const (
	LimitationSetKine = "kine"
	LimitationNone    = "none"
)

// resolveProfile checks --profile ("" is etcd).
func resolveProfile(p *string) error {
	name, err := check.ParseProfile(*p)
	if err != nil {
		return Usagef("%v", err)
	}
	*p = name
	return nil
}

// resolveLimitations turns the --limitation values (each a name, kine or
// none, or a comma-separated list of them) into the limitations declared,
// by name, with where the target states each: the user's declaration, or
// kine's own words for the kine set. nil when nothing was given: the
// fixture's own (kine's) apply. An unknown name is a usage error that
// lists the names.
func resolveLimitations(values []string) (map[string]string, error) {
	if len(values) == 0 {
		return nil, nil
	}
	out := map[string]string{}
	none := false
	for _, v := range values {
		for _, name := range strings.Split(v, ",") {
			switch name = strings.TrimSpace(name); name {
			case "":
			case LimitationNone:
				none = true
			case LimitationSetKine:
				for k, why := range kine.Documented() {
					out[k] = why
				}
			default:
				l, ok := check.LimitationNamed(name)
				if !ok {
					return nil, Usagef("--limitation %q: want one of %s (or %s: every one kine documents; %s: declare none); docs/profiles.md says what each excuses",
						name, strings.Join(check.LimitationNames(), ", "), LimitationSetKine, LimitationNone)
				}
				out[name] = check.DeclaredReason(l)
			}
		}
	}
	if none && len(out) > 0 {
		return nil, Usagef("--limitation none declares no limitation: it goes alone")
	}
	return out, nil
}
