package main

import (
	"bufio"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/recfs/recfs/codec/codectest/recfile"
	"github.com/recfs/recfs/index/report"
)

// writeTestLog writes recs as a leveldb log in a temporary directory.
func writeTestLog(t testing.TB, recs []string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "t.log")
	b := make([][]byte, len(recs))
	for i, r := range recs {
		b[i] = []byte(r)
	}
	recfile.WriteLog(t, path, b)
	return path
}

// TestCatJSON parses cat --json in both data modes: every payload comes
// back byte for byte, a record that is not UTF-8 stays base64 under
// --data text, and offsets and lengths agree with ls --json.
func TestCatJSON(t *testing.T) {
	recs := []string{"plain text", "", "caf\xc3\xa9 ☕", "bad \xff\xfe utf8", strings.Repeat("x", 70000)}
	path := writeTestLog(t, recs)
	var ls []report.ListLine
	sc := bufio.NewScanner(strings.NewReader(mustRun(t, "ls", "--json", path)))
	for sc.Scan() {
		var l report.ListLine
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatal(err)
		}
		ls = append(ls, l)
	}
	for _, mode := range []string{"base64", "text"} {
		for _, sel := range [][]string{nil, {"0-4"}} { // sequential and indexed paths
			out := mustRun(t, append([]string{"cat", "--json", "--data", mode, path}, sel...)...)
			lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
			if len(lines) != len(recs) {
				t.Fatalf("%s %v: %d lines, want %d", mode, sel, len(lines), len(recs))
			}
			for i, line := range lines {
				var c report.RecordLine
				if err := json.Unmarshal([]byte(line), &c); err != nil {
					t.Fatalf("line %d %q: %v", i, line, err)
				}
				data := []byte(c.Data)
				switch c.Encoding {
				case "base64":
					var err error
					if data, err = base64.StdEncoding.DecodeString(c.Data); err != nil {
						t.Fatal(err)
					}
				case "text":
					if mode != "text" {
						t.Errorf("record %d as text without --data text", i)
					}
				default:
					t.Fatalf("encoding %q", c.Encoding)
				}
				wantEnc := "base64"
				if mode == "text" && i != 3 {
					wantEnc = "text"
				}
				if c.N != int64(i) || string(data) != recs[i] || c.Encoding != wantEnc ||
					c.Offset != ls[i].Offset || c.Length != ls[i].Length || c.Length != int64(len(recs[i])) {
					t.Errorf("%s: record %d: n %d offset %d length %d encoding %s, data %d bytes", mode, i, c.N, c.Offset, c.Length, c.Encoding, len(data))
				}
			}
		}
	}
}

// TestCatNumberAndLast: --number prefixes each record with its mount name
// and puts one record per line; last:K counts from the end.
func TestCatNumberAndLast(t *testing.T) {
	var recs []string
	for i := range 12 {
		recs = append(recs, fmt.Sprintf("rec %d", i))
	}
	path := writeTestLog(t, recs)
	if got, want := mustRun(t, "cat", "--number", path, "last:3"), "000009\trec 9\n000010\trec 10\n000011\trec 11\n"; got != want {
		t.Errorf("cat --number last:3 = %q, want %q", got, want)
	}
	if got, want := mustRun(t, "cat", path, "last:100", "--sep", ","), strings.Join(recs, ",")+","; got != want {
		t.Errorf("last:100 of 12 = %q, want %q", got, want)
	}
	if got, want := mustRun(t, "ls", path, "last:1"), "11  "; !strings.HasPrefix(got, want) {
		t.Errorf("ls last:1 = %q", got)
	}
	for _, args := range [][]string{{"cat", "--json", "--number", path}, {"cat", "--data", "hex", "--json", path}, {"cat", path, "last:0"}} {
		if r := recfs(t, args...); r.code != exitUsage {
			t.Errorf("%q: exit %d, want usage", args, r.code)
		}
	}
}

// TestJSONOutputs parses the --json output of index and append, and the
// JSON error objects on standard error.
func TestJSONOutputs(t *testing.T) {
	path := writeTestLog(t, []string{"a", "b"})
	var ix struct {
		File, Index string
		Records     int
	}
	if err := json.Unmarshal([]byte(mustRun(t, "index", "--json", path)), &ix); err != nil || ix.Index != "built" || ix.Records != 2 {
		t.Errorf("index --json: %+v %v", ix, err)
	}
	if err := json.Unmarshal([]byte(mustRun(t, "index", "--json", path)), &ix); err != nil || ix.Index != "up_to_date" {
		t.Errorf("index --json again: %+v %v", ix, err)
	}
	in := filepath.Join(t.TempDir(), "in")
	os.WriteFile(in, []byte("c"), 0o644)
	var ap struct {
		Status               string
		Records, First, Last int
	}
	if err := json.Unmarshal([]byte(mustRun(t, "append", "--json", path, in, in)), &ap); err != nil || ap.Status != "appended" || ap.Records != 2 || ap.First != 2 || ap.Last != 3 {
		t.Errorf("append --json: %+v %v", ap, err)
	}
	for _, tc := range []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"info", "--json", path + ".missing"}, exitFailure, "no such file"},
		{[]string{"cat", "--json", path, "9-1"}, exitUsage, "bad record selection"},
		{[]string{"unmount", "--json", t.TempDir()}, exitFailure, "not a mount point"},
		{[]string{"index", "--json", "--bogus", path}, exitUsage, "unknown flag"},
	} {
		r := recfs(t, tc.args...)
		var je jsonError
		if err := json.Unmarshal([]byte(r.stderr), &je); err != nil || r.code != tc.code || je.Exit != tc.code || !strings.Contains(je.Error, tc.msg) || strings.Count(r.stderr, "\n") != 1 {
			t.Errorf("%q: exit %d, stderr %q (%v)", tc.args, r.code, r.stderr, err)
		}
	}
}

// TestIndexPrune: recfs index --prune keeps the cache under --max-cache,
// the most recently used first, and .recfs-style reporting names the cache
// file of a source.
func TestIndexPrune(t *testing.T) {
	cache := t.TempDir()
	var files []string
	for i := range 4 {
		recs := make([]string, 3000)
		for j := range recs {
			recs[j] = fmt.Sprint(i, j)
		}
		p := writeTestLog(t, recs)
		var ix struct {
			CacheFile string `json:"cache_file"`
		}
		if err := json.Unmarshal([]byte(mustRun(t, "index", "--json", "--cache-dir", cache, p)), &ix); err != nil || filepath.Dir(ix.CacheFile) != cache {
			t.Fatalf("index --json: %+v %v", ix, err)
		}
		files = append(files, ix.CacheFile)
	}
	fi, err := os.Stat(files[3])
	if err != nil {
		t.Fatal(err)
	}
	capBytes := fi.Size() + fi.Size()/2 // room for one
	var res struct {
		Removed, Kept int
		KeptBytes     int64 `json:"kept_bytes"`
	}
	out := mustRun(t, "index", "--prune", "--json", "--cache-dir", cache, "--max-cache", fmt.Sprint(capBytes))
	if err := json.Unmarshal([]byte(out), &res); err != nil || res.Removed != 3 || res.Kept != 1 || res.KeptBytes > capBytes {
		t.Fatalf("prune: %q %v", out, err)
	}
	if _, err := os.Stat(files[3]); err != nil {
		t.Errorf("the most recent index was pruned: %v", err)
	}
	if r := recfs(t, "index", "--max-cache", "1M", files[0]); r.code != exitUsage {
		t.Errorf("--max-cache without --prune: exit %d", r.code)
	}
}

// TestVersion: --version and info --json report the build.
func TestVersion(t *testing.T) {
	v := version()
	if v == "" || v == "unknown" {
		t.Fatalf("version() = %q", v)
	}
	if out := mustRun(t, "--version"); out != "recfs version "+v+"\n" {
		t.Errorf("--version: %q", out)
	}
	var inf struct{ Version string }
	if err := json.Unmarshal([]byte(mustRun(t, "info", "--json", writeTestLog(t, []string{"a"}))), &inf); err != nil || inf.Version != v {
		t.Errorf("info --json version %q (%v), want %q", inf.Version, err, v)
	}
}

// TestManPages: man DIR (make man) writes a page per
// visible command, with the flags and examples of its --help.
func TestManPages(t *testing.T) {
	dir := t.TempDir()
	mustRun(t, "man", dir)
	for _, name := range []string{"recfs", "recfs-mount", "recfs-cat", "recfs-index", "recfs-sample"} {
		b, err := os.ReadFile(filepath.Join(dir, name+".1"))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(string(b), ".TH "+strings.ToUpper(name)+" 1") {
			t.Errorf("%s.1 starts %q", name, b[:min(40, len(b))])
		}
	}
	b, _ := os.ReadFile(filepath.Join(dir, "recfs-mount.1"))
	for _, w := range []string{".SH OPTIONS", "--uid", "fuse.recfs", ".SH EXAMPLES"} {
		if !strings.Contains(string(b), w) {
			t.Errorf("recfs-mount.1 lacks %q", w)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "recfs-man.1")); err != nil {
		t.Errorf("the man command has no page: %v", err)
	}
}
