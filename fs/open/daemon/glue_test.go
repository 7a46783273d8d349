package daemon

import (
	"path/filepath"
	"reflect"
	"testing"
)

// TestStateDir: an absolute XDG_STATE_HOME holds the program's directory;
// a relative or empty one is ignored for ~/.local/state.
func TestStateDir(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	for _, tc := range []struct{ xdg, want string }{
		{"/var/state", "/var/state/app"},
		{"rel/state", filepath.Join(home, ".local", "state", "app")},
		{"", filepath.Join(home, ".local", "state", "app")},
	} {
		t.Setenv("XDG_STATE_HOME", tc.xdg)
		if got, err := StateDir("app"); err != nil || got != tc.want {
			t.Errorf("XDG_STATE_HOME=%q: %q, %v; want %q", tc.xdg, got, err, tc.want)
		}
	}
	t.Setenv("XDG_STATE_HOME", "")
	t.Setenv("HOME", "")
	if got, err := StateDir("app"); err == nil {
		t.Errorf("no HOME nor XDG_STATE_HOME: %q, want an error", got)
	}
}

// TestWithoutFlag: both forms of the flag go, everything else stays in
// order, including flags it is a prefix of.
func TestWithoutFlag(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ in, want []string }{
		{nil, nil},
		{[]string{"--daemon"}, nil},
		{[]string{"mount", "--daemon", "a", "--daemon=true", "b"}, []string{"mount", "a", "b"}},
		{[]string{"--daemonize", "-daemon", "--log-file", "x"}, []string{"--daemonize", "-daemon", "--log-file", "x"}},
	} {
		if got := WithoutFlag(tc.in, "daemon"); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("WithoutFlag(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
