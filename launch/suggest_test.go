package launch

import (
	"strings"
	"testing"
)

func TestSuggest(t *testing.T) {
	names := []string{"kill-leader", "kill-follower", "pause-leader", "watch-drop"}
	for in, want := range map[string]string{"kil-leader": "kill-leader", "watch-dorp": "watch-drop", "pause": "pause-leader",
		"explode": ""} {
		got := strings.Join(Suggest(in, names), ",")
		if got != want {
			t.Errorf("Suggest(%q) = %q, want %q", in, got, want)
		}
	}
}
