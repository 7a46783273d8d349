package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/recfs/recfs/codec/codectest/recfile"
)

// TestErrorsInUserWords: a misspelt command gets "did you mean", a record
// counted with a leading minus points to last:K, and a bad selection names
// every form.
func TestErrorsInUserWords(t *testing.T) {
	t.Parallel()
	f := filepath.Join(t.TempDir(), "f.log")
	recfile.WriteLog(t, f, [][]byte{[]byte("a"), []byte("b")})
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"inf", f}, `unknown command "inf" for "recfs"; did you mean info?`},
		{[]string{"verfy", f}, "did you mean verify?"},
		{[]string{"cat", f, "-1"}, "records counted from the end are last:K (last:1 is the last record)"},
		{[]string{"ls", f, "-12"}, "last:K"},
		{[]string{"cat", f, "5x"}, `bad record selection "5x" (want N, A-B, A- or last:K)`},
		{[]string{"ls", f, "last:0"}, `bad record selection "last:0" (want last:K with K >= 1)`},
	} {
		r := recfs(t, tc.args...)
		if r.code != exitUsage || !strings.Contains(r.stderr, tc.want) {
			t.Errorf("recfs %q: exit %d, stderr %q; want 2 and %q", tc.args, r.code, r.stderr, tc.want)
		}
	}
	if r := recfs(t, "--json", "inf", f); !strings.Contains(r.stderr, `"error":"unknown command \"inf\" for \"recfs\"; did you mean info?"`) {
		t.Errorf("--json inf: %q", r.stderr)
	}
}

// TestHelperArityNamesCommand: a misspelt command whose word is also a
// file in the current directory reads as a mount helper's SRC; the error
// then says the word is not a command and what was meant.
func TestHelperArityNamesCommand(t *testing.T) {
	t.Chdir(t.TempDir())
	recfile.WriteFile(t, "mnt", []byte("x"))
	r := recfs(t, "mnt", "f.log", "MNT")
	if r.code != exitUsage || !strings.Contains(r.stderr, `"mnt" is not a command; did you mean `) ||
		!strings.Contains(r.stderr, " mount? (as a mount helper recfs takes SRC MNT [-o options], got 3 paths)") {
		t.Errorf("recfs mnt f.log MNT: exit %d, stderr %q; want 2, the suggestion mount and the helper's arity", r.code, r.stderr)
	}
}

// TestFlavorOneSpelling: info, verify and --json spell it "flavor" (the
// JSON field scripts already parse).
func TestFlavorOneSpelling(t *testing.T) {
	t.Parallel()
	f := filepath.Join(t.TempDir(), "f.log")
	recfile.WriteLog(t, f, [][]byte{[]byte("a")})
	for _, args := range [][]string{{"info", f}, {"verify", f}, {"info", "--json", f}, {"verify", "--json", f}} {
		out := mustRun(t, args...)
		if strings.Contains(out, "flavour") || !strings.Contains(out, "flavor") {
			t.Errorf("recfs %q:\n%s", args, out)
		}
	}
}
