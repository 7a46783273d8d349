package e2e

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/recfs/recfs/codec/codectest"
	"github.com/recfs/recfs/codec/codectest/recfile"
	"github.com/recfs/recfs/codec/leveldb"
)

// onePassWALs writes a WAL of 40,000 WriteBatches as three files: clean;
// damaged in two places; and damaged early with a record that is no
// WriteBatch late in the file.
func onePassWALs(t *testing.T) []string {
	dir := t.TempDir()
	var recs [][]byte
	for i := range 40000 {
		recs = append(recs, codectest.PutBatch(uint64(i+1), fmt.Sprintf("user%06d", i), strings.Repeat("hello world ", i%40)))
	}
	clean, _ := recfile.LogBytes(t, recs, leveldb.WriterOptions{})
	damaged := bytes.Clone(clean)
	copy(damaged[3000000:], "XXXX")
	copy(damaged[len(damaged)-200000:], "YYYY")
	recs[30000] = []byte("not a write batch")
	misfit, _ := recfile.LogBytes(t, recs, leveldb.WriterOptions{})
	copy(misfit[1000000:], "ZZZZ")
	copy(misfit[len(misfit)-100000:], "ZZZZ") // after the misfit record
	var paths []string
	for i, b := range [][]byte{clean, damaged, misfit} {
		p := filepath.Join(dir, fmt.Sprintf("%06d.log", i+1))
		recfile.WriteFile(t, p, b)
		paths = append(paths, p)
	}
	return paths
}

// TestCatDecodeOnePass: cat --decode of every record of a local WAL, read
// in one pass (no table), writes what the same records selected as "0-"
// (read through a table) write: stdout, stderr (the damage warning, the
// misfit's error after it) and exit status alike, as text, JSON Lines,
// with --number and with several files; and it reads the file once, where
// the table's build and reads took it twice (strace).
func TestCatDecodeOnePass(t *testing.T) {
	t.Parallel()
	wals := onePassWALs(t)
	for _, flags := range [][]string{{"--decode", "batch"}, {"--decode", "batch", "--json"}, {"--decode", "batch", "--number"}, {"--decode", "manifest"}} {
		for _, files := range [][]string{{wals[0]}, {wals[1]}, {wals[2]}, wals} {
			args := append(append([]string{"cat"}, flags...), files...)
			got := runRecfs(t, args...)
			want := runRecfs(t, append(args, "0-")...)
			what := fmt.Sprintf("%q", args[1:])
			if got.code != want.code || got.stderr != want.stderr {
				t.Fatalf("%s: exit %d, stderr %q; through a table: exit %d, stderr %q", what, got.code, got.stderr, want.code, want.stderr)
			}
			if got.stdout != want.stdout {
				t.Fatalf("%s: %d bytes of stdout unlike the %d through a table", what, len(got.stdout), len(want.stdout))
			}
			if len(files) == 1 && files[0] == wals[1] && !strings.Contains(got.stderr, "is damaged (") {
				t.Fatalf("%s: no damage warning: %q", what, got.stderr)
			}
			if len(files) == 1 && files[0] == wals[2] && flags[1] == "batch" && (got.code != 1 || !strings.Contains(got.stderr, "is damaged (")) {
				t.Fatalf("%s: exit %d, stderr %q: want the misfit's failure and the warning", what, got.code, got.stderr)
			}
		}
	}

	strace, err := exec.LookPath("strace")
	if err != nil {
		t.Skip("strace not installed (.ci/run installs it): cannot count the bytes read")
	}
	fi, err := os.Stat(wals[0])
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		sel  []string
		most float64 // bytes read, in file sizes
	}{{nil, 1.1}, {[]string{"0-"}, 3}} {
		trace := filepath.Join(t.TempDir(), "trace")
		args := append([]string{"-f", "-qq", "-e", "trace=pread64", "-o", trace, bin, "cat", "--decode", "batch", wals[0]}, c.sel...)
		if r := runCmd(t, strace, args...); r.code != 0 {
			t.Fatalf("strace %q: exit %d: %s", args, r.code, r.stderr)
		}
		b, err := os.ReadFile(trace)
		if err != nil {
			t.Fatal(err)
		}
		var read int64
		// With -f, a call another thread interrupts is split in two lines:
		// "pread64(3, <unfinished ...>" and "<... pread64 resumed>..., 0) = N".
		for _, m := range regexp.MustCompile(`pread64(?:\(| resumed>).*\) = (\d+)`).FindAllStringSubmatch(string(b), -1) {
			n, _ := strconv.ParseInt(m[1], 10, 64)
			read += n
		}
		if float64(read) > c.most*float64(fi.Size()) || read < fi.Size() {
			t.Errorf("cat --decode batch %v of a %d-byte WAL read %d bytes, want at most %.1f times its size", c.sel, fi.Size(), read, c.most)
		}
	}
}
