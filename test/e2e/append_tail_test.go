package e2e

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/recfs/recfs/codec/codectest/recfile"
	"github.com/recfs/recfs/codec/leveldb"
	"github.com/recfs/recfs/codec/recordio"
	"github.com/recfs/recfs/codec/tfrecord"
)

// tailFormat is a writable format and two records of it, as bytes.
type tailFormat struct {
	name, ext string
	good      func(t *testing.T) []byte
	torn      bool // a writer stopping mid-append leaves a torn tail (not a journal)
}

var tailFormats = []tailFormat{
	{"leveldb", ".log", func(t *testing.T) []byte {
		b, _ := recfile.LogBytes(t, tailRecs, leveldb.WriterOptions{})
		return b
	}, true},
	{"tfrecord", ".tfrecord", func(t *testing.T) []byte {
		var b []byte
		for _, r := range tailRecs {
			b = tfrecord.AppendRecord(b, r)
		}
		return b
	}, true},
	{"recordio", ".rio", func(t *testing.T) []byte {
		return recfile.RIOBytes(t, tailRecs, recordio.WriterOptions{}, nil)
	}, true},
	{"recordio-trailer", ".rio", func(t *testing.T) []byte {
		return recfile.RIOBytes(t, tailRecs, recordio.WriterOptions{Trailer: true}, []byte("trl"))
	}, false},
}

var tailRecs = [][]byte{[]byte("rec-0"), []byte("rec-1")}

// attackTail is what ../shared/repro/18 put after two records: 3,000 bytes
// that are no record and no start of one.
func attackTail() []byte {
	var b []byte
	for range 11 {
		for i := range 256 {
			b = append(b, byte(i))
		}
	}
	return append(b, bytes.Repeat([]byte("x"), 184)...)
}

// recfsIn runs recfs with stdin and XDG_CACHE_HOME=cache.
func recfsIn(t *testing.T, cache, stdin string, args ...string) result {
	t.Helper()
	c := exec.Command(bin, args...)
	c.Env = append(os.Environ(), "XDG_CACHE_HOME="+cache)
	c.Stdin = strings.NewReader(stdin)
	return runPrepared(t, c)
}

// appendJSON is what `recfs append --json` prints.
type appendJSON struct {
	Status string `json:"status"`
	Moved  []struct {
		Offset  int64  `json:"offset"`
		Bytes   int64  `json:"bytes"`
		SavedTo string `json:"saved_to"`
		Reason  string `json:"reason"`
	} `json:"moved"`
}

// catAll returns the records of path as `recfs cat --json` reads them.
func catAll(t *testing.T, path string) []string {
	t.Helper()
	r := runRecfs(t, "cat", "--no-cache", "--json", "--data", "text", path)
	if r.code != 0 {
		t.Fatalf("recfs cat %s: %d %s", path, r.code, r.stderr)
	}
	var out []string
	for _, line := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
		var rec struct{ Data string }
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("cat line %q: %v", line, err)
		}
		out = append(out, rec.Data)
	}
	return out
}

// TestAppendDamagedTail (../shared/repro/18): `recfs append` to a file whose
// last record is followed by bytes that are no torn record refuses, names
// their offset and the ways on, and leaves the file byte-identical; with
// --force it moves them aside, says where on standard error and in --json,
// and appends. Every writable format.
func TestAppendDamagedTail(t *testing.T) {
	t.Parallel()
	for _, f := range tailFormats {
		t.Run(f.name, func(t *testing.T) {
			t.Parallel()
			good := f.good(t)
			whole := append(slices.Clone(good), attackTail()...)
			path := filepath.Join(t.TempDir(), "f"+f.ext)
			recfile.WriteFile(t, path, whole)
			cache := t.TempDir()

			r := recfsIn(t, cache, "appended", "append", path, "-")
			if r.code != 1 {
				t.Fatalf("append: exit %d, want 1\n%s%s", r.code, r.stdout, r.stderr)
			}
			for _, want := range []string{fmt.Sprintf("at offset %d", len(good)), "3000 bytes", "recfs verify", "--force"} {
				if !strings.Contains(r.stderr, want) {
					t.Errorf("refusal does not say %q: %s", want, r.stderr)
				}
			}
			mustSameFile(t, path, whole)
			if saved, _ := filepath.Glob(filepath.Join(cache, "recfs", "torn", "*")); len(saved) != 0 {
				t.Fatalf("bytes saved aside though nothing was cut: %v", saved)
			}

			r = recfsIn(t, cache, "appended", "append", "--force", "--json", path, "-")
			if r.code != 0 {
				t.Fatalf("append --force: exit %d\n%s", r.code, r.stderr)
			}
			var out appendJSON
			if err := json.Unmarshal([]byte(r.stdout), &out); err != nil || len(out.Moved) != 1 {
				t.Fatalf("append --force --json: %q (%v)", r.stdout, err)
			}
			mv := out.Moved[0]
			if mv.Offset != int64(len(good)) || mv.Bytes != 3000 || !strings.Contains(mv.Reason, "forced") {
				t.Fatalf("moved %+v", mv)
			}
			if b, err := os.ReadFile(mv.SavedTo); err != nil || !bytes.Equal(b, attackTail()) {
				t.Fatalf("saved in %s: %d bytes (%v)", mv.SavedTo, len(b), err)
			}
			if !strings.Contains(r.stderr, "moved the 3000 bytes at offset") || !strings.Contains(r.stderr, mv.SavedTo) {
				t.Fatalf("stderr does not say where the bytes went: %s", r.stderr)
			}
			if got := catAll(t, path); !slices.Equal(got, []string{"rec-0", "rec-1", "appended"}) {
				t.Fatalf("records after the forced append: %q", got)
			}
		})
	}
}

// tornFile returns good followed by the first cut bytes of what `recfs
// append` adds to it for a record of 100,000 bytes: a writer stopped in the
// middle of it.
func tornFile(t *testing.T, good []byte, ext string, cut int) []byte {
	t.Helper()
	dir := t.TempDir()
	path := filepath.Join(dir, "whole"+ext)
	recfile.WriteFile(t, path, good)
	if r := recfsIn(t, dir, strings.Repeat("T", 100000), "append", path, "-"); r.code != 0 {
		t.Fatalf("append: %d %s", r.code, r.stderr)
	}
	b, err := os.ReadFile(path)
	if err != nil || !bytes.Equal(b[:len(good)], good) {
		t.Fatalf("the append changed what was there (%v)", err)
	}
	return b[:len(good)+cut]
}

// TestAppendTornTail: a record a writer left half-written is moved aside by
// `recfs append`, which says so on standard error and in --json (where the
// bytes went), and appends after the intact records.
func TestAppendTornTail(t *testing.T) {
	t.Parallel()
	for _, f := range tailFormats {
		if !f.torn {
			continue
		}
		t.Run(f.name, func(t *testing.T) {
			t.Parallel()
			good := f.good(t)
			torn := tornFile(t, good, f.ext, 40000)
			path := filepath.Join(t.TempDir(), "f"+f.ext)
			recfile.WriteFile(t, path, torn)
			r := recfsIn(t, t.TempDir(), "appended", "append", "--json", path, "-")
			if r.code != 0 {
				t.Fatalf("append: exit %d\n%s", r.code, r.stderr)
			}
			var out appendJSON
			if err := json.Unmarshal([]byte(r.stdout), &out); err != nil || len(out.Moved) != 1 {
				t.Fatalf("append --json: %q (%v)", r.stdout, err)
			}
			mv := out.Moved[0]
			if mv.Offset != int64(len(good)) || mv.Bytes != 40000 || mv.Reason != "a torn record" {
				t.Fatalf("moved %+v", mv)
			}
			if b, err := os.ReadFile(mv.SavedTo); err != nil || !bytes.Equal(b, torn[len(good):]) {
				t.Fatalf("saved in %s: %d bytes (%v)", mv.SavedTo, len(b), err)
			}
			if !strings.Contains(r.stderr, "moved the 40000 bytes at offset") || !strings.Contains(r.stderr, mv.SavedTo) {
				t.Fatalf("stderr does not say where the bytes went: %s", r.stderr)
			}
			if got := catAll(t, path); !slices.Equal(got, []string{"rec-0", "rec-1", "appended"}) {
				t.Fatalf("records after the append: %q", got)
			}
		})
	}
}

// TestRWMountTails: through a --rw mount (both backends), a record written
// to a file that ends in bytes that are no torn record fails (EIO) and
// leaves the file byte-identical, with a log line naming their offset; one
// written to a file with a torn tail lands after the intact records, and
// the log says where the torn bytes went.
func TestRWMountTails(t *testing.T) {
	needFUSE(t)
	eachBackend(t, func(t *testing.T, backend string) {
		cache := t.TempDir()
		t.Setenv("XDG_CACHE_HOME", cache) // where torn tails are saved
		for _, f := range tailFormats {
			good := f.good(t)
			whole := append(slices.Clone(good), attackTail()...)
			src, mnt, m, _ := mountRW(t, backend, "damaged"+f.ext, whole, 2)
			if err := os.WriteFile(filepath.Join(mnt, "new"), []byte("appended\n"), 0o644); !errors.Is(err, syscall.EIO) {
				t.Fatalf("%s: a record written after the damaged tail: %v, want EIO", f.name, err)
			}
			unmountAndWait(t, m)
			mustSameFile(t, src, whole)
			if want := fmt.Sprintf("at offset %d after the last record are not a torn record", len(good)); !strings.Contains(m.stderr.String(), want) {
				t.Fatalf("%s: the mount's log does not say %q:\n%s", f.name, want, m.stderr)
			}
			if !f.torn {
				continue
			}
			torn := tornFile(t, good, f.ext, 40000)
			src, mnt, m, _ = mountRW(t, backend, "torn"+f.ext, torn, 2)
			sh(t, "echo appended > "+filepath.Join(mnt, "new"))
			unmountAndWait(t, m)
			if got := catAll(t, src); !slices.Equal(got, []string{"rec-0", "rec-1", "appended\n"}) {
				t.Fatalf("%s: records after the append: %q", f.name, got)
			}
			if log := m.stderr.String(); !strings.Contains(log, "moved 40000 bytes") || !strings.Contains(log, filepath.Join(cache, "recfs", "torn")) {
				t.Fatalf("%s: the mount's log does not say where the torn bytes went:\n%s", f.name, log)
			}
		}
	})
}

// mustSameFile fails unless the file at path holds want.
func mustSameFile(t *testing.T, path string, want []byte) {
	t.Helper()
	got, err := os.ReadFile(path)
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("%s changed: %d bytes, want %d (%v)", path, len(got), len(want), err)
	}
}
