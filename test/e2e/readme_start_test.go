package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestReadmeFirstScreen runs the recfs lines of the README's first code
// block as a new user would after installing (recfs on PATH, a fresh
// HOME): sample writes the files the next lines read. Lines piping into
// man(1) are left out (man may be missing); the cmd tests check the page.
func TestReadmeFirstScreen(t *testing.T) {
	needBinary(t)
	t.Parallel()
	_, rest, ok := strings.Cut(readme(t), "```\n")
	if !ok {
		t.Fatal("README has no code block")
	}
	block, _, _ := strings.Cut(rest, "```\n")
	var script []string
	for _, l := range strings.Split(block, "\n") {
		if i := strings.Index(l, "  #"); i >= 0 {
			l = l[:i]
		}
		l = strings.TrimSpace(l)
		if (strings.HasPrefix(l, "recfs ") || strings.HasPrefix(l, "cd ")) && !strings.Contains(l, "| man") {
			script = append(script, l)
		}
	}
	if len(script) < 2 || !strings.HasPrefix(script[0], "recfs sample ") {
		t.Fatalf("the README's first screen does not start a new user with recfs sample: %q", script)
	}
	if !strings.Contains(block, "make install") {
		t.Errorf("the README's first screen has no install step:\n%s", block)
	}
	home := t.TempDir()
	c := exec.Command("bash", "-euo", "pipefail", "-c", strings.Join(script, "\n"))
	c.Env = append(os.Environ(), "HOME="+home, "PATH="+filepath.Dir(bin)+":"+os.Getenv("PATH"))
	c.Dir = home
	r := runPrepared(t, c)
	if r.code != 0 {
		t.Fatalf("the README's first screen %q: exit %d\nstdout:\n%s\nstderr:\n%s", script, r.code, r.stdout, r.stderr)
	}
	if !strings.Contains(r.stdout, "format:   leveldb\n") || !strings.Contains(r.stdout, "\t{\"seq\":") {
		t.Errorf("the first screen's info and cat printed:\n%s", r.stdout)
	}
}

// readme returns the README's text.
func readme(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
