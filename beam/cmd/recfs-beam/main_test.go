package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/ptest"

	"github.com/recfs/recfs/beam/recfsio"
	"github.com/recfs/recfs/codec/tfrecord"
	"github.com/recfs/recfs/index"
)

func TestMain(m *testing.M) {
	ptest.MainWithDefault(m, "prism")
}

// shards writes n TFRecord files of varied records (some with bytes that
// need escaping) and returns their paths.
func shards(t *testing.T, n int) []string {
	t.Helper()
	dir := t.TempDir()
	var paths []string
	for i := range n {
		var b bytes.Buffer
		w := tfrecord.NewWriter(&b, tfrecord.WriterOptions{})
		for k := range 300 {
			rec := fmt.Sprintf("shard %d record %d", i, k)
			if k%7 == 0 {
				rec += " needle\t\\\x00\xff"
			}
			if _, err := w.WriteRecord([]byte(rec)); err != nil {
				t.Fatal(err)
			}
		}
		w.Close()
		p := filepath.Join(dir, fmt.Sprintf("part-%d.tfrecord", i))
		if err := os.WriteFile(p, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	return paths
}

// records returns the records of path as the index gives them.
func records(t *testing.T, path string) []recfsio.Record {
	t.Helper()
	tb, err := index.Open(context.Background(), path, index.Options{CacheDir: "-"})
	if err != nil {
		t.Fatal(err)
	}
	defer tb.Close()
	var out []recfsio.Record
	for n := range tb.Len() {
		p := make([]byte, tb.Size(n))
		if _, err := tb.ReadAt(n, p, 0); err != nil {
			t.Fatal(err)
		}
		out = append(out, recfsio.Record{File: path, N: n, Payload: p})
	}
	return out
}

// command runs recfs-beam with args and returns its summary line.
func command(t *testing.T, args ...string) recfsio.Summary {
	t.Helper()
	for _, f := range []string{"output", "format", "cache-dir", "to"} {
		flag.Set(f, "")
	}
	flag.Set("split-bytes", "2048")
	flag.Set("shards", "1")
	var out bytes.Buffer
	if err := run(context.Background(), args, &out); err != nil {
		t.Fatal(err)
	}
	var s recfsio.Summary
	if err := json.Unmarshal(out.Bytes(), &s); err != nil {
		t.Fatalf("summary %q: %v", out.String(), err)
	}
	return s
}

// lines returns the lines of the file at path, sorted.
func lines(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	l := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	slices.Sort(l)
	return l
}

// TestGrep runs `recfs-beam grep`: the output holds the line of every
// matching record, once, escaped; the summary counts every record read.
func TestGrep(t *testing.T) {
	paths := shards(t, 3)
	out := filepath.Join(t.TempDir(), "matches")
	sum := command(t, "grep", `needle\s`, filepath.Join(filepath.Dir(paths[0]), "*.tfrecord"), "--output", out, "--cache-dir", t.TempDir())
	var want []string
	var all int64
	re := regexp.MustCompile(`needle\s`)
	for _, p := range paths {
		for _, r := range records(t, p) {
			all++
			if re.Match(r.Payload) {
				want = append(want, line(r))
			}
		}
	}
	slices.Sort(want)
	if got := lines(t, out); !slices.Equal(got, want) {
		t.Errorf("grep wrote %d lines, want %d; first %q, want %q", len(got), len(want), got[0], want[0])
	}
	if !strings.HasSuffix(want[0], `needle\t\\\x00\xff`) {
		t.Errorf("line %q: bytes not escaped", want[0])
	}
	if sum.Records != all || sum.Restrictions <= int64(len(paths)) {
		t.Errorf("summary %+v: want %d records in more than %d restrictions", sum, all, len(paths))
	}
}

// TestGrepShards runs `recfs-beam grep --shards 4`: the lines are spread
// over files FILE-0000k-of-00004, each line in one of them, once.
func TestGrepShards(t *testing.T) {
	paths := shards(t, 3)
	out := filepath.Join(t.TempDir(), "matches")
	command(t, "grep", `needle\s`, filepath.Join(filepath.Dir(paths[0]), "*.tfrecord"), "--output", out, "--shards", "4", "--cache-dir", t.TempDir())
	var want []string
	for _, p := range paths {
		for _, r := range records(t, p) {
			if strings.Contains(string(r.Payload), "needle\t") {
				want = append(want, line(r))
			}
		}
	}
	slices.Sort(want)
	files, err := filepath.Glob(out + "*")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range files {
		if !regexp.MustCompile(`-0000[0-3]-of-00004$`).MatchString(f) {
			t.Errorf("output file %s: not a shard name", f)
		}
		got = append(got, lines(t, f)...)
	}
	slices.Sort(got)
	if len(files) < 2 || !slices.Equal(got, want) {
		t.Errorf("%d shards hold %d lines, want several shards holding %d", len(files), len(got), len(want))
	}
}

// TestCount runs `recfs-beam count --output`: one line per file with its
// records and payload bytes.
func TestCount(t *testing.T) {
	paths := shards(t, 2)
	out := filepath.Join(t.TempDir(), "counts")
	sum := command(t, "count", filepath.Join(filepath.Dir(paths[0]), "part-*"), "--output", out, "--cache-dir", t.TempDir())
	var want []string
	var recs, bytes int64
	for _, p := range paths {
		var b int64
		rs := records(t, p)
		for _, r := range rs {
			b += int64(len(r.Payload))
		}
		want = append(want, fmt.Sprintf("%s\t%d\t%d", p, len(rs), b))
		recs, bytes = recs+int64(len(rs)), bytes+b
	}
	if got := lines(t, out); !slices.Equal(got, want) {
		t.Errorf("count wrote %q, want %q", got, want)
	}
	if sum.Records != recs || sum.Bytes != bytes {
		t.Errorf("summary %+v, want %d records, %d bytes", sum, recs, bytes)
	}
}

// TestCopy runs `recfs-beam copy` into both formats: each copy, read
// back by recfs, holds every record of the shards once (as a multiset: the
// sink does not keep the order), and the summary counts them.
func TestCopy(t *testing.T) {
	paths := shards(t, 3)
	var want []string
	for _, p := range paths {
		for _, r := range records(t, p) {
			want = append(want, string(r.Payload))
		}
	}
	slices.Sort(want)
	for _, to := range []string{"tfrecord", "leveldb"} {
		out := filepath.Join(t.TempDir(), "copy."+to)
		sum := command(t, "copy", filepath.Join(filepath.Dir(paths[0]), "*.tfrecord"), "--to", to, "--output", out, "--cache-dir", t.TempDir())
		var got []string
		for _, r := range records(t, out) {
			got = append(got, string(r.Payload))
		}
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Errorf("%s copy holds %d records, want %d", to, len(got), len(want))
		}
		if sum.Records != int64(len(want)) || sum.Restrictions <= int64(len(paths)) {
			t.Errorf("%s summary %+v: want %d records in more than %d restrictions", to, sum, len(want), len(paths))
		}
	}
}

// TestUsage refuses a command line without its operands.
func TestUsage(t *testing.T) {
	flag.Set("output", "")
	flag.Set("to", "")
	for _, args := range [][]string{nil, {"grep", "x"}, {"grep", "x", "y"}, {"count"}, {"frob", "x"}, {"copy", "x"}, {"copy", "x", "--output", "y"}, {"copy", "x", "--output", "y", "--to", "zip"}} {
		if err := run(context.Background(), args, &bytes.Buffer{}); err != errUsage {
			t.Errorf("%q: %v, want the usage error", args, err)
		}
	}
}
