package codectest

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// The reference vectors of the unit tests live in the module's
// codec/codectest/testdata/vectors folder, a copy of the project's reference vectors
// (written by the reference implementations, each with a JSON manifest):
// every manifest, every grailbio file but the largest, and the leveldb
// logs no writer of this module reproduces (pebble's WALs). The other
// leveldb logs, written by goleveldb or App Engine's records writer, are
// kept as their manifests alone: [Vector] writes them again from the
// manifest's records and checks the bytes against its sha256. Tests of
// every vector against the reference implementations are in the test/
// module.

// VectorDir returns the codec/codectest/testdata/vectors folder.
func VectorDir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "testdata", "vectors")
}

// LogWriter writes records as a leveldb log, App Engine style (every block
// padded whole) when appEngine is set. The format packages' tests pass
// their own writer, recfile.LogWriter the codec's.
type LogWriter func(t testing.TB, recs [][]byte, appEngine bool) []byte

// Vector returns the path of the vector rel (such as
// "leveldb/seed-example.log" or "grailbio/flate.rio.json"): the file in
// VectorDir, or, for a leveldb log kept by its manifest alone, the log
// write makes of the manifest's records, in a temporary folder of t. A
// written log that differs from the manifest's sha256 fails t.
func Vector(t testing.TB, rel string, write LogWriter) string {
	t.Helper()
	p := filepath.Join(VectorDir(), filepath.FromSlash(rel))
	if _, err := os.Stat(p); err == nil {
		return p
	}
	dir, name := path.Split(rel)
	m, ok := logManifests(t)[name]
	if dir != "leveldb/" || !ok {
		t.Fatalf("no reference vector %s in %s", rel, VectorDir())
	}
	if write == nil {
		t.Fatalf("vector %s is kept as its manifest alone: a LogWriter must write it", rel)
	}
	var appEngine bool
	switch m.Writer {
	case "goleveldb":
	case "appengine-records.py":
		appEngine = true
	default:
		t.Fatalf("vector %s, written by %s, is not in %s", rel, m.Writer, VectorDir())
	}
	b := write(t, m.records(t), appEngine)
	if sum := sha256.Sum256(b); hex.EncodeToString(sum[:]) != m.SHA256 {
		t.Fatalf("vector %s written again (%d bytes) differs from its manifest's sha256 (%d bytes)", rel, len(b), m.Size)
	}
	out := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(out, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return out
}

// Vectors returns the paths of the vector files whose names match pattern
// (path.Match syntax, such as "grailbio/*.rio"), in name order, as Vector
// returns them; leveldb logs kept by their manifests alone are among them.
func Vectors(t testing.TB, pattern string, write LogWriter) []string {
	t.Helper()
	stored, err := filepath.Glob(filepath.Join(VectorDir(), filepath.FromSlash(pattern)))
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, p := range stored {
		names[filepath.ToSlash(strings.TrimPrefix(p, VectorDir()+string(filepath.Separator)))] = true
	}
	for name := range logManifests(t) {
		if ok, _ := path.Match(pattern, "leveldb/"+name); ok {
			names["leveldb/"+name] = true
		}
	}
	var out []string
	for _, rel := range sortedKeys(names) {
		out = append(out, Vector(t, rel, write))
	}
	return out
}

func sortedKeys(m map[string]bool) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

// logManifest is what Vector needs of a leveldb vector's manifest.
type logManifest struct {
	File    string          `json:"file"`
	Size    int64           `json:"size"`
	SHA256  string          `json:"sha256"`
	Writer  string          `json:"writer"`
	Records json.RawMessage `json:"records"`
}

// logManifests reads the leveldb manifests, by the name of their log.
func logManifests(t testing.TB) map[string]logManifest {
	t.Helper()
	out := map[string]logManifest{}
	ReadManifests(t, "leveldb", func(p string, b []byte) {
		var m logManifest
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		out[m.File] = m
	})
	return out
}

// ReadManifests calls each with the path and contents of every manifest
// in the vectors' folder dir ("leveldb" or "grailbio"), in name order,
// leaving out leveldb's index.json. A folder without manifests fails t.
func ReadManifests(t testing.TB, dir string, each func(path string, manifest []byte)) {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(VectorDir(), dir, "*.json"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no manifests in %s: %v", filepath.Join(VectorDir(), dir), err)
	}
	for _, p := range paths {
		if filepath.Base(p) == "index.json" {
			continue
		}
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		each(p, b)
	}
}

// records regenerates the manifest's records: their lengths are listed,
// or (the aggregate form) made by the lengths rule; their bytes follow
// the payload rule (VectorPayload).
func (m logManifest) records(t testing.TB) [][]byte {
	t.Helper()
	lens, err := VectorLengths(m.Records)
	if err != nil {
		t.Fatalf("%s: %v", m.File, err)
	}
	recs := make([][]byte, len(lens))
	for i, n := range lens {
		recs[i] = VectorPayload(i, n)
	}
	return recs
}

// VectorLengths returns the record lengths of a leveldb manifest's
// "records": the listed lengths, or, for the aggregate form ({"count":
// n, "lengths_sha256": ...}), n lengths made by its lengths rule (a
// xorshift32 from 0x00C0FFEE, each length the state modulo 200), checked
// against lengths_sha256.
func VectorLengths(records json.RawMessage) ([]int, error) {
	if bytes.HasPrefix(bytes.TrimSpace(records), []byte("[")) {
		var list []struct {
			Len int `json:"len"`
		}
		if err := json.Unmarshal(records, &list); err != nil {
			return nil, err
		}
		lens := make([]int, len(list))
		for i, r := range list {
			lens[i] = r.Len
		}
		return lens, nil
	}
	var agg struct {
		Count      int    `json:"count"`
		LengthsSHA string `json:"lengths_sha256"`
	}
	if err := json.Unmarshal(records, &agg); err != nil {
		return nil, err
	}
	st := uint32(0x00C0FFEE)
	lens := make([]int, agg.Count)
	strs := make([]string, agg.Count)
	for i := range lens {
		st ^= st << 13
		st ^= st >> 17
		st ^= st << 5
		lens[i] = int(st % 200)
		strs[i] = strconv.Itoa(lens[i])
	}
	if sum := sha256.Sum256([]byte(strings.Join(strs, "\n"))); hex.EncodeToString(sum[:]) != agg.LengthsSHA {
		return nil, errors.New("lengths rule: the lengths made differ from lengths_sha256")
	}
	return lens, nil
}

// VectorPayload returns record i of length n under the leveldb vectors'
// payload rule (index.json "payload_rule"): a xorshift32 seeded from i.
func VectorPayload(i, n int) []byte {
	st := uint32(i+1)*0x9E3779B9 + 0x7F4A7C15
	if st == 0 {
		st = 1
	}
	b := make([]byte, n)
	for j := range b {
		st ^= st << 13
		st ^= st >> 17
		st ^= st << 5
		b[j] = byte(st)
	}
	return b
}
