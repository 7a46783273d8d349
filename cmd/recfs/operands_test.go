package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/recfs/recfs/codec/codectest/recfile"
)

// manyFiles makes a directory holding two clean logs (one in a
// subdirectory), a damaged one and a file that is no record file.
func manyFiles(t *testing.T) (dir, a, b, bad string) {
	t.Helper()
	dir = t.TempDir()
	a = filepath.Join(dir, "a.log")
	b = filepath.Join(dir, "sub", "b.log")
	bad = filepath.Join(dir, "c.log")
	if err := os.Mkdir(filepath.Dir(b), 0o755); err != nil {
		t.Fatal(err)
	}
	recfile.WriteLog(t, a, [][]byte{[]byte("a0"), []byte("a1")})
	recfile.WriteLog(t, b, [][]byte{[]byte("b0")})
	recfile.WriteLog(t, bad, [][]byte{[]byte("c0"), []byte("c1")})
	data, err := os.ReadFile(bad)
	if err != nil {
		t.Fatal(err)
	}
	data[16] ^= 0xff // the second record's payload: its checksum fails
	recfile.WriteFile(t, bad, data)
	recfile.WriteFile(t, filepath.Join(dir, "LOCK"), []byte("lock\n"))
	return dir, a, b, bad
}

// TestManyOperands: info, verify and ls take several files and
// directories (searched recursively for record files); each file has its
// result, a failed one is named on stderr while the others go on, a summary
// line ends the text, and the exit status is 1 when any failed.
func TestManyOperands(t *testing.T) {
	t.Parallel()
	dir, a, b, bad := manyFiles(t)
	missing := filepath.Join(dir, "missing.log")

	r := recfs(t, "info", "--no-cache", a, missing, b)
	if r.code != 1 || !strings.Contains(r.stderr, missing) {
		t.Errorf("info with a missing file: exit %d, stderr %q; want 1 naming it", r.code, r.stderr)
	}
	if !strings.Contains(r.stdout, "file:     "+a+"\n") || !strings.Contains(r.stdout, "file:     "+b+"\n") ||
		!strings.HasSuffix(r.stdout, "\n\n3 record files: 2 ok, 1 failed\n") {
		t.Errorf("info a missing b:\n%s", r.stdout)
	}

	r = recfs(t, "verify", dir)
	if r.code != 1 || !strings.HasSuffix(r.stdout, "\n\n3 record files: 2 ok, 1 damaged, 0 failed; 1 other file skipped\n") {
		t.Errorf("verify DIR: exit %d, stdout:\n%s", r.code, r.stdout)
	}
	if strings.Count(r.stdout, "\nOK\n") != 2 || strings.Count(r.stdout, "\nDAMAGED\n") != 1 {
		t.Errorf("verify DIR reports:\n%s", r.stdout)
	}
	if r := recfs(t, "verify", a, b); r.code != 0 || !strings.HasSuffix(r.stdout, "2 record files: 2 ok, 0 damaged, 0 failed\n") {
		t.Errorf("verify of two clean files: exit %d, stdout:\n%s", r.code, r.stdout)
	}

	r = recfs(t, "verify", "--json", dir, missing)
	if r.code != 1 {
		t.Errorf("verify --json: exit %d", r.code)
	}
	got := map[string]string{}
	dec := json.NewDecoder(strings.NewReader(r.stdout))
	for dec.More() {
		var v struct {
			Path  string `json:"path"`
			OK    *bool  `json:"ok"`
			Error string `json:"error"`
		}
		if err := dec.Decode(&v); err != nil {
			t.Fatalf("verify --json output: %v\n%s", err, r.stdout)
		}
		switch {
		case v.Error != "":
			got[v.Path] = "error"
		case v.OK != nil && *v.OK:
			got[v.Path] = "ok"
		default:
			got[v.Path] = "damaged"
		}
	}
	want := map[string]string{a: "ok", b: "ok", bad: "damaged", missing: "error"}
	if len(got) != len(want) {
		t.Errorf("verify --json results %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("verify --json: %s is %q, want %q", k, got[k], v)
		}
	}

	if r := recfs(t, "info", filepath.Join(dir, "sub", "..", "sub", "nothing-here")); r.code != 1 {
		t.Errorf("info of a missing file alone: exit %d", r.code)
	}
	empty := t.TempDir()
	if r := recfs(t, "verify", empty); r.code != 1 || !strings.Contains(r.stderr, "no record files in "+empty) {
		t.Errorf("verify of an empty directory: exit %d, stderr %q", r.code, r.stderr)
	}
}

// TestLsManyAndDir: ls lists a local directory (format and size of each
// entry), and several files with a heading each, the selection applying to
// every one; --json lines name their file.
func TestLsManyAndDir(t *testing.T) {
	t.Parallel()
	dir, a, b, _ := manyFiles(t)
	r := recfs(t, "ls", dir)
	want := "other                      5  LOCK\n" +
		"leveldb                   18  a.log\n" +
		"leveldb                   18  c.log\n" +
		"dir                        -  sub/\n"
	if r.code != 0 || r.stdout != want {
		t.Errorf("ls DIR: exit %d, stdout:\n%s\nwant:\n%s", r.code, r.stdout, want)
	}
	r = recfs(t, "ls", "--no-cache", a, b, "last:1")
	if want := a + ":\n1   9  2\n\n" + b + ":\n0  0  2\n"; r.code != 0 || r.stdout != want {
		t.Errorf("ls A B last:1: exit %d, stdout %q, want %q", r.code, r.stdout, want)
	}
	r = recfs(t, "ls", "--no-cache", "--json", a, b, "0")
	if want := `{"file":"` + a + `","n":0,"offset":0,"length":2}` + "\n" + `{"file":"` + b + `","n":0,"offset":0,"length":2}` + "\n"; r.code != 0 || r.stdout != want {
		t.Errorf("ls --json A B 0: exit %d, stdout %q, want %q", r.code, r.stdout, want)
	}
	if r := recfs(t, "ls", a, filepath.Join(dir, "missing.log")); r.code != 1 || !strings.Contains(r.stdout, a+":\n0   0  2\n1   9  2\n") {
		t.Errorf("ls with a missing file: exit %d, stdout %q", r.code, r.stdout)
	}
}

// TestCatMany: cat FILE... writes each file's records in turn, the
// selections applying to each; --number and --json name the file; a file
// that fails is named on stderr and the others go on (exit 1).
func TestCatMany(t *testing.T) {
	t.Parallel()
	dir, a, b, _ := manyFiles(t)
	if out := mustRun(t, "cat", a, b); out != "a0a1b0" {
		t.Errorf("cat A B: %q", out)
	}
	if out, want := mustRun(t, "cat", "--number", a, b, "0"), a+":000000\ta0\n"+b+":000000\tb0\n"; out != want {
		t.Errorf("cat --number A B 0: %q, want %q", out, want)
	}
	want := `{"file":"` + a + `","n":1,"offset":9,"length":2,"data":"a1","encoding":"text"}` + "\n" +
		`{"file":"` + b + `","n":0,"offset":0,"length":2,"data":"b0","encoding":"text"}` + "\n"
	if out := mustRun(t, "cat", "--json", "--data", "text", a, b, "last:1"); out != want {
		t.Errorf("cat --json A B last:1: %q, want %q", out, want)
	}
	missing := filepath.Join(dir, "missing.log")
	r := recfs(t, "cat", a, missing, b)
	if r.code != 1 || r.stdout != "a0a1b0" || !strings.Contains(r.stderr, missing) {
		t.Errorf("cat A missing B: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	if r := recfs(t, "cat", "--follow", a, b); r.code != exitUsage {
		t.Errorf("cat --follow A B: exit %d", r.code)
	}
}

// TestIndexMany: index takes several files and directories, one line
// each and a summary; --prune runs once, after them.
func TestIndexMany(t *testing.T) {
	t.Parallel()
	dir, a, b, _ := manyFiles(t)
	cache := t.TempDir()
	out := mustRun(t, "index", "--cache-dir", cache, dir)
	if strings.Count(out, ": index built: leveldb") != 3 || !strings.HasSuffix(out, "\n\n3 record files: 3 ok, 0 failed; 1 other file skipped\n") {
		t.Errorf("index DIR:\n%s", out)
	}
	out = mustRun(t, "index", "--prune", "--cache-dir", cache, a, b)
	if strings.Count(out, ": index up to date") != 2 || strings.Count(out, "pruned "+cache) != 1 || !strings.HasSuffix(out, ")\n") {
		t.Errorf("index --prune A B:\n%s", out)
	}
	// The prune flags hold for the one prune, not for each file.
	if r := recfs(t, "index", "--prune", "--max-cache", "200M", "--max-age", "1h", "--cache-dir", cache, a, b); r.code != 0 || strings.Count(r.stdout, "pruned "+cache) != 1 {
		t.Errorf("index --prune --max-cache --max-age A B: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r := recfs(t, "index", "--cache-dir", cache, a, filepath.Join(dir, "missing.log")); r.code != 1 || !strings.Contains(r.stdout, "1 failed") {
		t.Errorf("index A missing: exit %d\n%s", r.code, r.stdout)
	}
}
