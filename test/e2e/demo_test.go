package e2e

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// TestDemo runs `make demo` (docs/demo.sh with the binary under test): it
// exits 0, runs the README's recipes as the README writes them (mounted at
// ev instead of /mnt/ev) with the answers the sample file holds, and
// leaves no mount, daemon or directory behind.
func TestDemo(t *testing.T) {
	needFUSE(t)
	if _, err := exec.LookPath("jq"); err != nil {
		t.Skip("no jq: the demo's JSON recipes would be skipped")
	}
	tmp := t.TempDir()
	c := exec.Command("bash", filepath.Join("..", "..", "docs", "demo.sh"), bin)
	c.Env = append(os.Environ(), "TMPDIR="+tmp, "XDG_STATE_HOME="+tmp)
	r := runPrepared(t, c)
	if r.code != 0 {
		t.Fatalf("demo exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	out := r.stdout

	// Every command of the README's "Which records match" and "Scripts"
	// recipes ran, word for word.
	for _, cmd := range readmeRecipes(t, "Which records match", "Scripts:") {
		if !strings.Contains(out, "$ "+strings.ReplaceAll(cmd, "/mnt/", "")+"\n") {
			t.Errorf("the demo does not run the README's recipe %q", cmd)
		}
	}
	// What they found in the sample: every 97th record from 13 is a quota
	// error.
	answers := []struct{ after, want string }{
		{"$ grep -rl quota ev\n", "ev/000013\nev/000110\n"},
		{"$ recfs cat --number events.log | grep quota\n", "000013\t{\"seq\":13,"},
		{"| jq -r 'select(.data | test(\"quota\")) | .n'\n", "13\n110\n207\n"},
		{"$ recfs unmount --json ev | jq -r .status\n", "unmounted\n"},
		{"| jq -r .error\n", "stat missing.log: no such file or directory\n"},
	}
	for _, a := range answers {
		_, rest, ok := strings.Cut(out, a.after)
		if !ok || !strings.HasPrefix(rest, a.want) {
			t.Errorf("after %q the demo printed %q; want %q first", a.after, head(rest, 80), a.want)
		}
	}
	if !regexp.MustCompile(`\ndaemon pid [1-9][0-9]*\n`).MatchString(out) {
		t.Errorf("the --json mount recipe gave no pid")
	}
	// Nothing left: no mount of the demo, no directory.
	mi, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(mi), tmp) {
		t.Errorf("the demo left a mount under %s", tmp)
	}
	if ents, _ := os.ReadDir(tmp); len(ents) > 1 { // the state directory may stay
		t.Errorf("the demo left %d entries in its TMPDIR", len(ents))
	}
	if m := regexp.MustCompile(`daemon pid (\d+)`).FindAllStringSubmatch(out, -1); len(m) > 0 {
		for _, p := range m {
			if b, err := os.ReadFile("/proc/" + p[1] + "/cmdline"); err == nil && strings.Contains(string(b), tmp) {
				if pid, err := strconv.Atoi(p[1]); err == nil {
					_ = syscall.Kill(pid, syscall.SIGKILL)
				}
				t.Errorf("daemon %s of the demo still runs", p[1])
			}
		}
	}
}

// readmeRecipes returns the command lines (comments cut) of the shell
// blocks that follow each of the README's paragraphs starting with one of
// leads, in the Recipes section.
func readmeRecipes(t *testing.T, leads ...string) []string {
	t.Helper()
	f, err := os.Open(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var cmds []string
	inRecipes, want, inBlock := false, false, false
	found := map[string]bool{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		l := sc.Text()
		switch {
		case strings.HasPrefix(l, "## "):
			inRecipes = l == "## Recipes"
		case !inRecipes:
		case inBlock && l == "```":
			inBlock, want = false, false
		case inBlock:
			if i := strings.Index(l, "  #"); i >= 0 {
				l = l[:i]
			}
			if l = strings.TrimSpace(l); l != "" {
				cmds = append(cmds, l)
			}
		case l == "```sh":
			inBlock = want
		default:
			for _, lead := range leads {
				if strings.HasPrefix(l, lead) {
					want, found[lead] = true, true
				}
			}
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	for _, lead := range leads {
		if !found[lead] {
			t.Fatalf("README's Recipes section has no paragraph %q", lead)
		}
	}
	if len(cmds) == 0 {
		t.Fatal("no recipe commands found in the README")
	}
	return cmds
}

// head returns at most n bytes of s.
func head(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}
