package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/recfs/recfs/codec/codectest/recfile"
	"github.com/recfs/recfs/codec/leveldb"

	"github.com/recfs/recfs/index"
)

// runIn runs the command line with stdin.
func runIn(t *testing.T, stdin string, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	root := newRootCmd(&out, &errb)
	root.SetIn(strings.NewReader(stdin))
	root.SetArgs(args)
	_, err := root.ExecuteContextC(context.Background())
	code := exitCode(err)
	if err != nil {
		errb.WriteString(err.Error())
	}
	return code, out.String(), errb.String()
}

func tableRecords(t *testing.T, path string) []string {
	t.Helper()
	tb, err := index.Open(context.Background(), path, index.Options{CacheDir: "-"})
	if err != nil {
		t.Fatal(err)
	}
	defer tb.Close()
	var out []string
	for n := range tb.Len() {
		p := make([]byte, tb.Size(n))
		if _, err := tb.ReadAt(n, p, 0); err != nil {
			t.Fatal(err)
		}
		out = append(out, string(p))
	}
	return out
}

func TestAppendCommand(t *testing.T) {
	dir := t.TempDir()
	in1 := filepath.Join(dir, "one.json")
	os.WriteFile(in1, []byte(`{"user":"u17"}`), 0o644)
	for _, format := range []string{"leveldb", "recordio"} {
		t.Run(format, func(t *testing.T) {
			path := filepath.Join(dir, "new-"+format)
			if code, _, e := runIn(t, "", "append", path, in1); code != exitFailure {
				t.Fatalf("append to a missing file without --create: exit %d (%s)", code, e)
			}
			code, out, e := runIn(t, "from stdin", "append", "--create", format, path, in1, "-")
			if code != 0 || !strings.Contains(out, "appended 2 record(s)") {
				t.Fatalf("exit %d: %s %s", code, out, e)
			}
			if code, _, e := runIn(t, "a\nb\r\n\nlast", "append", "--lines", "--sync", path); code != 0 {
				t.Fatalf("--lines: exit %d %s", code, e)
			}
			got := strings.Join(tableRecords(t, path), "|")
			if want := `{"user":"u17"}|from stdin|a|b||last`; got != want {
				t.Fatalf("records %q, want %q", got, want)
			}
		})
	}
	// The leveldb file is byte-identical to one writer session of the same records.
	var buf bytes.Buffer
	w := leveldb.NewWriter(&buf, leveldb.WriterOptions{})
	for _, r := range []string{`{"user":"u17"}`, "from stdin", "a", "b", "", "last"} {
		w.WriteRecord([]byte(r))
	}
	w.Close()
	if got, _ := os.ReadFile(filepath.Join(dir, "new-leveldb")); !bytes.Equal(got, buf.Bytes()) {
		t.Fatal("appended log differs from a single writer session")
	}
}

func TestAppendCommandErrors(t *testing.T) {
	dir := t.TempDir()
	legacy, err := os.ReadFile(recfile.Vector(t, "grailbio/legacy-unpacked.grail-rio"))
	if err != nil {
		t.Fatalf("reference vector missing: %v", err)
	}
	lp := filepath.Join(dir, "x.grail-rio")
	os.WriteFile(lp, legacy, 0o644)
	if code, _, e := runIn(t, "x", "append", lp); code != exitFailure || !strings.Contains(e, "legacy") {
		t.Fatalf("legacy append: exit %d %q", code, e)
	}
	if code, _, _ := runIn(t, "", "append"); code != exitUsage {
		t.Fatalf("no FILE: exit %d, want %d", code, exitUsage)
	}
	if code, _, _ := runIn(t, "", "append", "--create", "nope", filepath.Join(dir, "n")); code != exitUsage {
		t.Fatalf("bad --create: exit %d", code)
	}
	if code, _, _ := runIn(t, "", "append", filepath.Join(dir, "x.grail-rio"), filepath.Join(dir, "missing-input")); code != exitFailure {
		t.Fatalf("missing input: exit %d", code)
	}
	if after, _ := os.ReadFile(lp); !bytes.Equal(after, legacy) {
		t.Fatal("failed appends changed the file")
	}
}

// TestAppendCreateOtherFormat: --create FMT on a file that exists in
// another format is a usage error that leaves it as it was (appending
// would add records of the file's format); in its own format it appends.
func TestAppendCreateOtherFormat(t *testing.T) {
	path := filepath.Join(t.TempDir(), "db.log")
	if code, _, e := runIn(t, "first", "append", "--create", "leveldb", path, "-"); code != 0 {
		t.Fatalf("create: exit %d %s", code, e)
	}
	before, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, format := range []string{"tfrecord", "recordio"} {
		code, _, e := runIn(t, "x", "append", "--create", format, path, "-")
		if code != exitUsage || !strings.Contains(e, "exists and is a leveldb file") {
			t.Errorf("--create %s on a leveldb log: exit %d %q, want %d and why", format, code, e, exitUsage)
		}
	}
	if after, _ := os.ReadFile(path); !bytes.Equal(after, before) {
		t.Fatal("a refused --create changed the file")
	}
	if code, _, e := runIn(t, "second", "append", "--create", "leveldb", path, "-"); code != 0 {
		t.Fatalf("--create leveldb on a leveldb log: exit %d %s", code, e)
	}
	if got := strings.Join(tableRecords(t, path), "|"); got != "first|second" {
		t.Fatalf("records %q, want first|second", got)
	}
}

// TestAppendNothing: an append of no records says so, and names no range
// of record numbers.
func TestAppendNothing(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "log")
	for _, step := range []struct {
		stdin, want string
		args        []string
	}{
		{"", "appended 0 record(s) to " + path + "\n", []string{"--create", "leveldb"}},
		{"a\nb", "appended 2 record(s) to " + path + " as 000000..000001\n", nil},
		{"", "appended 0 record(s) to " + path + "\n", nil},
	} {
		args := append([]string{"append", "--lines"}, step.args...)
		code, out, e := runIn(t, step.stdin, append(args, path)...)
		if code != 0 || out != step.want {
			t.Fatalf("append %q %v: exit %d, out %q (want %q) %s", step.stdin, step.args, code, out, step.want, e)
		}
	}
}
