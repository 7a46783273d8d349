package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/recfs/recfs/codec/recordio"
	"github.com/recfs/recfs/index/report"
)

// xorshift32 is the generator of the leveldb vectors' payload rule.
func xorshift32(s uint32) uint32 {
	s ^= s << 13
	s ^= s >> 17
	s ^= s << 5
	return s
}

// logPayload generates record i of length n by the leveldb manifests'
// payload_rule, independently of recfs.
func logPayload(i int, n int64) []byte {
	s := uint32(i+1)*0x9E3779B9 + 0x7F4A7C15
	if s == 0 {
		s = 1
	}
	p := make([]byte, n)
	for k := range p {
		s = xorshift32(s)
		p[k] = byte(s)
	}
	return p
}

func TestLogPayloadRuleMatchesManifest(t *testing.T) {
	m := loadManifest(t, "leveldb/seed-example.json")
	for i, r := range m.records(t) {
		if got := sha(logPayload(i, r.Len)); got != r.SHA256 {
			t.Fatalf("record %d: generated payload sha %s, manifest %s", i, got, r.SHA256)
		}
	}
}

// infoCase is a vector and the info fields expected from its manifest.
type infoCase struct {
	file, manifest, format string
}

var infoCases = []infoCase{
	{"leveldb/seed-example.log", "leveldb/seed-example.json", "leveldb"},
	{"leveldb/empty-records.log", "leveldb/empty-records.json", "leveldb"},
	{"leveldb/trailer-sizes.log", "leveldb/trailer-sizes.json", "leveldb"},
	{"leveldb/pebble-recyclable.log", "leveldb/pebble-recyclable.json", "leveldb"},
	{"leveldb/large-1mib.log", "leveldb/large-1mib.json", "leveldb"},
	{"grailbio/plain-small.rio", "grailbio/plain-small.rio.json", "recordio"},
	{"grailbio/header-types.rio", "grailbio/header-types.rio.json", "recordio"},
	{"grailbio/trailer-json.rio", "grailbio/trailer-json.rio.json", "recordio"},
	{"grailbio/flate.rio", "grailbio/flate.rio.json", "recordio"},
	{"grailbio/zstd-purego.rio", "grailbio/zstd-purego.rio.json", "recordio"},
	{"grailbio/empty.rio", "grailbio/empty.rio.json", "recordio"},
	{"grailbio/legacy-packed.grail-rpk", "grailbio/legacy-packed.grail-rpk.json", "recordio-legacy"},
	{"grailbio/legacy-unpacked.grail-rio", "grailbio/legacy-unpacked.grail-rio.json", "recordio-legacy"},
	{"grailbio/legacy-packed-flate.grail-rpk-gz", "grailbio/legacy-packed-flate.grail-rpk-gz.json", "recordio-legacy"},
}

func TestInfoJSONMatchesManifests(t *testing.T) {
	for _, c := range infoCases {
		t.Run(c.file, func(t *testing.T) {
			m := loadManifest(t, c.manifest)
			recs := m.records(t)
			var in report.Info
			out := mustRun(t, "info", "--json", "--no-cache", vec(t, c.file))
			dec := json.NewDecoder(strings.NewReader(out))
			dec.UseNumber()
			var raw map[string]any
			if err := dec.Decode(&raw); err != nil {
				t.Fatalf("info --json output is not JSON: %v\n%s", err, out)
			}
			for _, k := range []string{"path", "format", "flavor", "size", "records", "payload_bytes", "header",
				"has_trailer", "trailer_bytes", "damage", "index_source", "index_seconds"} {
				if _, ok := raw[k]; !ok {
					t.Errorf("field %q missing", k)
				}
			}
			if err := json.Unmarshal([]byte(out), &in); err != nil {
				t.Fatal(err)
			}
			var wantBytes int64
			for _, r := range recs {
				wantBytes += r.Len
			}
			if in.Format != c.format || in.Records != int64(len(recs)) || in.PayloadBytes != wantBytes || in.Size != m.Size {
				t.Errorf("got format %s, %d records, %d bytes, size %d; manifest says %s, %d, %d, %d",
					in.Format, in.Records, in.PayloadBytes, in.Size, c.format, len(recs), wantBytes, m.Size)
			}
			if len(in.Damage) != 0 || in.IndexSource != "built" {
				t.Errorf("damage %v, source %q; want none, built", in.Damage, in.IndexSource)
			}
			wantTrailer := int64(0)
			if m.Trailer != nil {
				wantTrailer = m.Trailer.Len
			}
			if in.HasTrailer != (m.Trailer != nil) || in.TrailerBytes != wantTrailer {
				t.Errorf("trailer %v/%d, manifest %v", in.HasTrailer, in.TrailerBytes, m.Trailer)
			}
			if len(in.Header) != len(m.Header) {
				t.Fatalf("%d header entries, manifest has %d", len(in.Header), len(m.Header))
			}
			for i, h := range m.Header {
				gotV, _ := json.Marshal(in.Header[i].Value)
				if in.Header[i].Key != h.Key || in.Header[i].Type != h.Type || string(gotV) != string(h.Value) {
					t.Errorf("header %d: got %s=%s (%s), manifest %s=%s (%s)", i,
						in.Header[i].Key, gotV, in.Header[i].Type, h.Key, h.Value, h.Type)
				}
			}
		})
	}
}

func TestInfoText(t *testing.T) {
	m := loadManifest(t, "grailbio/trailer-json.rio.json")
	out := mustRun(t, "info", "--no-cache", vec(t, "grailbio/trailer-json.rio"))
	for _, want := range []string{
		fmt.Sprintf("records:  %d\n", len(m.Items)),
		fmt.Sprintf("trailer:  %d bytes\n", m.Trailer.Len),
		"trailer = true (bool)",
		"damage:   none\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("info output lacks %q:\n%s", want, out)
		}
	}
}

// expectedLs derives (offset, length) of every record from a manifest: the
// first chunk of each leveldb record, the block of each grailbio item.
func expectedLs(t *testing.T, m manifest) [][2]int64 {
	recs := m.records(t)
	out := make([][2]int64, len(recs))
	if m.ItemCount != nil {
		for i, it := range recs {
			out[i] = [2]int64{it.Loc.Block, it.Len}
		}
		return out
	}
	i := 0
	for _, c := range m.Layout {
		if c.TypeName == "FULL" || c.TypeName == "FIRST" {
			out[i] = [2]int64{c.Offset, recs[i].Len}
			i++
		}
	}
	if i != len(recs) {
		t.Fatalf("manifest layout has %d record starts for %d records", i, len(recs))
	}
	return out
}

func TestLsMatchesManifestLayout(t *testing.T) {
	for _, c := range []struct{ file, manifest string }{
		{"leveldb/seed-example.log", "leveldb/seed-example.json"},
		{"leveldb/trailer-sizes.log", "leveldb/trailer-sizes.json"},
		{"grailbio/trailer-json.rio", "grailbio/trailer-json.rio.json"},
		{"grailbio/plain-small.rio", "grailbio/plain-small.rio.json"},
	} {
		t.Run(c.file, func(t *testing.T) {
			want := expectedLs(t, loadManifest(t, c.manifest))
			path := vec(t, c.file)
			// JSON Lines form.
			var got [][2]int64
			dec := json.NewDecoder(strings.NewReader(mustRun(t, "ls", "--json", path)))
			for n := int64(0); dec.More(); n++ {
				var l report.ListLine
				if err := dec.Decode(&l); err != nil {
					t.Fatal(err)
				}
				if l.N != n {
					t.Fatalf("line %d has n=%d", n, l.N)
				}
				got = append(got, [2]int64{l.Offset, l.Length})
			}
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("ls --json: got %v, manifest %v", got, want)
			}
			// Text form: N OFFSET LENGTH in whitespace-separated columns.
			lines := strings.Split(strings.TrimSuffix(mustRun(t, "ls", path), "\n"), "\n")
			if len(lines) != len(want) {
				t.Fatalf("ls printed %d lines for %d records", len(lines), len(want))
			}
			for i, l := range lines {
				f := strings.Fields(l)
				if len(f) != 3 || f[0] != strconv.Itoa(i) || f[1] != fmt.Sprint(want[i][0]) || f[2] != fmt.Sprint(want[i][1]) {
					t.Errorf("line %d = %q, want %d %d %d", i, l, i, want[i][0], want[i][1])
				}
			}
			// A selection lists exactly the selected records.
			last := len(want) - 1
			sel := strings.Fields(mustRun(t, "ls", path, strconv.Itoa(last)))
			if len(sel) != 3 || sel[2] != fmt.Sprint(want[last][1]) {
				t.Errorf("ls %d: %v", last, sel)
			}
		})
	}
}

func TestLsLengthsAggregate(t *testing.T) {
	// many-small-10000: SHA-256 of the lengths joined by "\n", no final newline.
	b, err := os.ReadFile(vec(t, "leveldb/many-small-10000.json"))
	if err != nil {
		t.Fatal(err)
	}
	var m struct{ Records logAggregate }
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	out := mustRun(t, "ls", vec(t, "leveldb/many-small-10000.log"))
	var lens []string
	for _, l := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		lens = append(lens, strings.Fields(l)[2])
	}
	if int64(len(lens)) != m.Records.Count || sha([]byte(strings.Join(lens, "\n"))) != m.Records.LengthsSHA {
		t.Errorf("ls lengths of %d records do not match the manifest's lengths_sha256", len(lens))
	}
}

func TestCatRecordsMatchManifests(t *testing.T) {
	for _, c := range infoCases {
		t.Run(c.file, func(t *testing.T) {
			recs := loadManifest(t, c.manifest).records(t)
			path := vec(t, c.file)
			for i, r := range recs {
				out := mustRun(t, "cat", path, strconv.Itoa(i))
				if int64(len(out)) != r.Len || sha([]byte(out)) != r.SHA256 {
					t.Errorf("record %d: %d bytes sha %s; manifest %d bytes sha %s", i, len(out), sha([]byte(out)), r.Len, r.SHA256)
				}
			}
		})
	}
}

func TestCatAllMatchesAggregates(t *testing.T) {
	b, err := os.ReadFile(vec(t, "leveldb/many-small-10000.json"))
	if err != nil {
		t.Fatal(err)
	}
	var lm struct{ Records logAggregate }
	if err := json.Unmarshal(b, &lm); err != nil {
		t.Fatal(err)
	}
	// No selection, and a selection large enough for the read-ahead path.
	for _, sel := range [][]string{nil, {"0-"}, {"0-4999", "5000-"}} {
		out := mustRun(t, append([]string{"cat", vec(t, "leveldb/many-small-10000.log")}, sel...)...)
		if sha([]byte(out)) != lm.Records.ConcatSHA256 || int64(len(out)) != lm.Records.TotalBytes {
			t.Errorf("cat %v of many-small-10000: %d bytes, sha %s; manifest %d, %s", sel, len(out), sha([]byte(out)), lm.Records.TotalBytes, lm.Records.ConcatSHA256)
		}
	}
	gm := loadManifest(t, "grailbio/many-tiny.rio.json")
	if out := mustRun(t, "cat", vec(t, "grailbio/many-tiny.rio")); sha([]byte(out)) != gm.Summary.ConcatSHA256 || int64(len(out)) != gm.Summary.TotalBytes {
		t.Errorf("cat of many-tiny: %d bytes; manifest %d", len(out), gm.Summary.TotalBytes)
	}
}

func TestCatSelectionsAndSeparator(t *testing.T) {
	m := loadManifest(t, "leveldb/seed-example.json")
	recs := m.records(t)
	p := make([][]byte, len(recs))
	for i, r := range recs {
		p[i] = logPayload(i, r.Len)
	}
	join := func(sep string, idx ...int) string {
		var b bytes.Buffer
		for _, i := range idx {
			b.Write(p[i])
			b.WriteString(sep)
		}
		return b.String()
	}
	path := vec(t, "leveldb/seed-example.log")
	for _, c := range []struct {
		args []string
		want string
	}{
		{nil, join("", 0, 1, 2)},
		{[]string{"2", "0"}, join("", 2, 0)},
		{[]string{"0-1"}, join("", 0, 1)},
		{[]string{"1-"}, join("", 1, 2)},
		{[]string{"1-1", "--sep", `\n`}, join("\n", 1)},
		{[]string{"--sep", `\x1e`, "2", "0-2"}, join("\x1e", 2, 0, 1, 2)},
		{[]string{"--sep", "--", "0", "2"}, join("--", 0, 2)},
	} {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			out := mustRun(t, append([]string{"cat", path}, c.args...)...)
			if out != c.want {
				t.Errorf("got %d bytes (sha %s), want %d bytes (sha %s)", len(out), sha([]byte(out)), len(c.want), sha([]byte(c.want)))
			}
		})
	}
}

func TestCatTrailer(t *testing.T) {
	m := loadManifest(t, "grailbio/trailer-json.rio.json")
	out := mustRun(t, "cat", "--trailer", vec(t, "grailbio/trailer-json.rio"))
	if int64(len(out)) != m.Trailer.Len || sha([]byte(out)) != m.Trailer.SHA256 {
		t.Errorf("trailer: %d bytes sha %s; manifest %d %s", len(out), sha([]byte(out)), m.Trailer.Len, m.Trailer.SHA256)
	}
}

// copyVector copies a vector into a temporary directory and returns the copy's path.
func copyVector(t *testing.T, rel string) string {
	t.Helper()
	b, err := os.ReadFile(vec(t, rel))
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), filepath.Base(rel))
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestVerify(t *testing.T) {
	seed := loadManifest(t, "leveldb/seed-example.json")
	recs := seed.records(t)
	// Flip a payload byte of record 1, inside its first chunk (7-byte header at 1007).
	const flipAt = 1007 + 7 + 100
	corrupt := copyVector(t, "leveldb/seed-example.log")
	b, _ := os.ReadFile(corrupt)
	b[flipAt] ^= 0x55
	if err := os.WriteFile(corrupt, b, 0o644); err != nil {
		t.Fatal(err)
	}
	truncated := copyVector(t, "grailbio/trailer-json.rio")
	if err := os.Truncate(truncated, 32768+20); err != nil {
		t.Fatal(err)
	}

	clean := recfs(t, "verify", vec(t, "leveldb/seed-example.log"))
	var total int64
	for _, r := range recs {
		total += r.Len
	}
	if clean.code != 0 || !strings.HasSuffix(clean.stdout, "OK\n") ||
		!strings.Contains(clean.stdout, fmt.Sprintf("records:  %d, %d payload bytes read back", len(recs), total)) {
		t.Errorf("verify clean: exit %d\n%s%s", clean.code, clean.stdout, clean.stderr)
	}
	tr := recfs(t, "verify", "--json", vec(t, "grailbio/trailer-json.rio"))
	var tv report.Verification
	if err := json.Unmarshal([]byte(tr.stdout), &tv); err != nil || tr.code != 0 || !tv.OK || tv.TrailerBytes != 580 {
		t.Errorf("verify trailer-json: exit %d, %+v, %v", tr.code, tv, err)
	}

	bad := recfs(t, "verify", "--json", corrupt)
	var v report.Verification
	if err := json.Unmarshal([]byte(bad.stdout), &v); err != nil {
		t.Fatalf("verify --json: %v\n%s", err, bad.stdout)
	}
	if bad.code != exitFailure || v.OK || len(v.Damage) == 0 || bad.stderr != "" {
		t.Fatalf("verify corrupted copy: exit %d, report %+v, stderr %q; want exit 1 with damage and a silent stderr", bad.code, v, bad.stderr)
	}
	hit := false
	for _, d := range v.Damage {
		hit = hit || (d.Offset <= flipAt && flipAt < d.Offset+d.Length)
	}
	if !hit || v.Records != int64(len(recs)-1) {
		t.Errorf("damage %+v does not cover offset %d, or %d records survive (want %d)", v.Damage, flipAt, v.Records, len(recs)-1)
	}
	if r := recfs(t, "verify", corrupt); r.code != exitFailure || !strings.Contains(r.stdout, "DAMAGED") {
		t.Errorf("verify text on corrupted copy: exit %d\n%s", r.code, r.stdout)
	}
	if r := recfs(t, "verify", truncated); r.code != exitFailure || !strings.Contains(r.stdout, "DAMAGED") {
		t.Errorf("verify truncated copy: exit %d\n%s", r.code, r.stdout)
	}
	if r := recfs(t, "verify", "--strict", corrupt); r.code != exitFailure || !strings.Contains(r.stderr, "offset") {
		t.Errorf("verify --strict on corrupted copy: exit %d, stderr %q; want 1 and an error naming the offset", r.code, r.stderr)
	}
	if r := recfs(t, "info", "--json", "--no-cache", corrupt); r.code != 0 || !strings.Contains(r.stdout, `"damage": [`) {
		t.Errorf("info on a damaged file should succeed and list the damage: exit %d\n%s", r.code, r.stdout)
	}
}

func TestIndexCommand(t *testing.T) {
	dir := t.TempDir()
	src := copyVector(t, "leveldb/seed-example.log")
	first := mustRun(t, "index", "--cache-dir", dir, src)
	if !strings.Contains(first, "index built") || !strings.Contains(first, " 3 records") {
		t.Errorf("first index run: %q", first)
	}
	second := mustRun(t, "index", "--cache-dir", dir, src)
	if !strings.Contains(second, "up to date") {
		t.Errorf("second index run: %q", second)
	}
	if out := mustRun(t, "info", "--json", "--cache-dir", dir, src); !strings.Contains(out, `"index_source": "cached"`) {
		t.Errorf("info after index did not use the saved index:\n%s", out)
	}
	list := func() string {
		es, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, e := range es {
			names = append(names, e.Name())
		}
		return strings.Join(names, " ")
	}
	before := list()
	if out := mustRun(t, "index", "--rebuild", "--cache-dir", dir, src); !strings.Contains(out, "index built") {
		t.Errorf("index --rebuild: %q", out)
	}
	if after := list(); after != before || before == "" {
		t.Errorf("cache dir held %q before --rebuild and %q after; want the same saved index replaced", before, after)
	}
	if out := mustRun(t, "info", "--json", "--cache-dir", dir, src); !strings.Contains(out, `"index_source": "cached"`) {
		t.Errorf("info after index --rebuild did not use the saved index:\n%s", out)
	}
	// A grown file: the saved index no longer matches and is replaced.
	f, err := os.OpenFile(src, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write(make([]byte, 100)); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if out := mustRun(t, "index", "--cache-dir", dir, src); strings.Contains(out, "up to date") {
		t.Errorf("index after the file grew: %q", out)
	}
}

func TestErrors(t *testing.T) {
	seed := vec(t, "leveldb/seed-example.log")
	text := filepath.Join(t.TempDir(), "notes.txt")
	if err := os.WriteFile(text, []byte("just some text, not records\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	empty := filepath.Join(t.TempDir(), "empty.log")
	if err := os.WriteFile(empty, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name   string
		args   []string
		code   int
		stderr string // substring expected on stderr
	}{
		{"no command", nil, exitUsage, "missing command"},
		{"unknown command", []string{"frobnicate"}, exitUsage, "unknown command"},
		{"missing FILE", []string{"info"}, exitUsage, "arg"},
		{"too many args", []string{"sample", t.TempDir(), seed}, exitUsage, "arg"},
		{"unknown flag", []string{"info", "--bogus", seed}, exitUsage, "unknown flag"},
		{"bad format", []string{"info", "--format", "zip", seed}, exitUsage, "unknown format"},
		{"bad log format", []string{"--log-format", "xml", "info", seed}, exitUsage, "log-format"},
		{"bad legacy transform", []string{"info", "--legacy-transform", "zstd", seed}, exitUsage, "legacy-transform"},
		{"no-cache with cache-dir", []string{"info", "--no-cache", "--cache-dir", "/tmp", seed}, exitUsage, "contradict"},
		{"index without cache", []string{"index", "--no-cache", seed}, exitUsage, "no-cache"},
		{"bad selection", []string{"cat", seed, "1x"}, exitUsage, "bad record selection"},
		{"reversed range", []string{"cat", seed, "2-1"}, exitUsage, "bad record selection"},
		{"negative", []string{"cat", seed, "--", "-1"}, exitUsage, "bad record selection"},
		{"trailer with selection", []string{"cat", "--trailer", seed, "1"}, exitUsage, "selection"},
		{"bad escape", []string{"cat", "--sep", `\q`, seed}, exitUsage, "escape"},
		{"missing file", []string{"info", filepath.Join(t.TempDir(), "nope.log")}, exitFailure, "no such file"},
		{"directory", []string{"cat", t.TempDir(), "0"}, exitFailure, "directory"},
		{"directory, sequential", []string{"cat", t.TempDir()}, exitFailure, "directory"},
		{"no record files in a directory", []string{"verify", t.TempDir()}, exitFailure, "no record files"},
		{"device", []string{"info", os.DevNull}, exitFailure, "character device, not a regular file"},
		{"not a record file", []string{"info", text}, exitFailure, "not a record file"},
		{"record out of range", []string{"cat", seed, "3"}, exitFailure, "record 3 is out of range: the file has 3 records (0-2)"},
		{"range past the end", []string{"ls", seed, "1-5"}, exitFailure, "record 3 is out of range"},
		{"open range past the end", []string{"cat", seed, "7-"}, exitFailure, "record 7 is out of range"},
		{"out of range in empty file", []string{"cat", empty, "0"}, exitFailure, "no records"},
		{"no trailer", []string{"cat", "--trailer", seed}, exitFailure, "no trailer"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := recfs(t, c.args...)
			if r.code != c.code || !strings.Contains(r.stderr, c.stderr) {
				t.Errorf("recfs %q: exit %d, stderr %q; want exit %d and %q", c.args, r.code, r.stderr, c.code, c.stderr)
			}
			if c.code == exitFailure && r.stdout != "" {
				t.Errorf("a failed command printed to stdout: %q", r.stdout)
			}
		})
	}
}

func TestVerboseJSONLogging(t *testing.T) {
	r := recfs(t, "-v", "--log-format", "json", "info", "--no-cache", vec(t, "leveldb/seed-example.log"))
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	var entry map[string]any
	line, _, _ := strings.Cut(r.stderr, "\n")
	if err := json.Unmarshal([]byte(line), &entry); err != nil || entry["level"] != "debug" || entry["records"] != float64(3) {
		t.Errorf("want a JSON debug log line with records=3, got %q (%v)", r.stderr, err)
	}
	if r := recfs(t, "info", "--no-cache", vec(t, "leveldb/seed-example.log")); r.stderr != "" {
		t.Errorf("without -v nothing should be logged, got %q", r.stderr)
	}
}

func BenchmarkCatAll(b *testing.B) {
	path := vec(b, "leveldb/many-small-10000.log")
	var out, errb bytes.Buffer
	if code := run(b.Context(), []string{"index", path}, &out, &errb); code != 0 {
		b.Fatal(errb.String())
	}
	b.ResetTimer()
	for b.Loop() {
		out.Reset()
		if code := run(b.Context(), []string{"cat", path}, &out, &errb); code != 0 {
			b.Fatal(errb.String())
		}
		b.SetBytes(int64(out.Len()))
	}
}

func BenchmarkLs(b *testing.B) {
	path := vec(b, "leveldb/many-small-10000.log")
	fi, err := os.Stat(path)
	if err != nil {
		b.Fatal(err)
	}
	var out, errb bytes.Buffer
	for b.Loop() {
		out.Reset()
		if code := run(b.Context(), []string{"ls", path}, &out, &errb); code != 0 {
			b.Fatal(errb.String())
		}
	}
	b.SetBytes(fi.Size())
}

// FuzzCommandsAgree runs info, ls, cat and verify on arbitrary bytes. None
// may panic or exit with a usage error; when info succeeds, ls lists
// exactly its record count, cat writes exactly its payload bytes, and
// verify's verdict matches info's damage list.
func FuzzCommandsAgree(f *testing.F) {
	// Small seeds only: minimizing a large interesting input runs four
	// commands per step and stalls the fuzzer.
	for _, rel := range []string{"leveldb/empty-records.log", "grailbio/legacy-unpacked.grail-rio", "grailbio/legacy-packed.grail-rpk"} {
		if b, err := os.ReadFile(vec(f, rel)); err == nil && len(b) <= 4096 {
			f.Add(b)
		}
	}
	f.Add([]byte("not a record file"))
	f.Add(recordio.AppendLegacyPacked(nil, [][]byte{[]byte("a"), nil, []byte("bc")}, 2))
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(t.TempDir(), "f")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		info := recfs(t, "info", "--json", "--no-cache", path)
		if info.code == exitFailure {
			return
		}
		if info.code != 0 {
			t.Fatalf("info: exit %d: %s", info.code, info.stderr)
		}
		var in report.Info
		if err := json.Unmarshal([]byte(info.stdout), &in); err != nil {
			t.Fatal(err)
		}
		ls := recfs(t, "ls", "--no-cache", path)
		if lines := int64(strings.Count(ls.stdout, "\n")); ls.code != 0 || lines != in.Records {
			t.Fatalf("ls: exit %d, %d lines for %d records", ls.code, lines, in.Records)
		}
		cat := recfs(t, "cat", "--no-cache", path)
		if cat.code == 0 && int64(len(cat.stdout)) != in.PayloadBytes {
			t.Fatalf("cat wrote %d bytes, info says %d", len(cat.stdout), in.PayloadBytes)
		}
		v := recfs(t, "verify", path)
		if v.code == exitUsage || (v.code == 0) != (len(in.Damage) == 0 && cat.code == 0) {
			t.Fatalf("verify exit %d, info damage %v, cat exit %d", v.code, in.Damage, cat.code)
		}
	})
}
