// Package tfrnode drives the independent TFRecord implementation the
// nested module's tests compare recfs with: the npm package
// @roboflow/tfrecords, run under node through js/tfr.js. .ci/run installs
// node and npm; Need skips a test when they are missing, and fails it under
// CI.
package tfrnode

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
)

var (
	once   sync.Once
	dir    string
	reason string
)

// setup copies js/ into the user cache and runs npm ci there, once per
// lockfile content.
func setup() {
	for _, tool := range []string{"node", "npm"} {
		if _, err := exec.LookPath(tool); err != nil {
			reason = tool + " is not installed (.ci/run installs nodejs and npm)"
			return
		}
	}
	_, self, _, _ := runtime.Caller(0)
	src := filepath.Join(filepath.Dir(self), "js")
	lock, err := os.ReadFile(filepath.Join(src, "package-lock.json"))
	if err != nil {
		reason = err.Error()
		return
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	d := filepath.Join(cache, "recfs-interop", "tfrecords-node")
	if err := os.MkdirAll(d, 0o755); err != nil {
		reason = err.Error()
		return
	}
	for _, f := range []string{"package.json", "package-lock.json", "tfr.js"} {
		b, err := os.ReadFile(filepath.Join(src, f))
		if err == nil {
			err = os.WriteFile(filepath.Join(d, f), b, 0o644)
		}
		if err != nil {
			reason = err.Error()
			return
		}
	}
	stamp := filepath.Join(d, "node_modules", ".recfs-lock")
	if old, err := os.ReadFile(stamp); err != nil || !bytes.Equal(old, lock) {
		cmd := exec.Command("npm", "ci", "--no-audit", "--no-fund", "--loglevel=error")
		cmd.Dir = d
		if out, err := cmd.CombinedOutput(); err != nil {
			reason = "npm ci: " + err.Error() + ": " + string(out)
			return
		}
		if err := os.WriteFile(stamp, lock, 0o644); err != nil {
			reason = err.Error()
			return
		}
	}
	dir = d
}

// Need returns the directory holding tfr.js with its node_modules, or
// skips t (fails it when $CI is set) saying why there is none.
func Need(t testing.TB) string {
	t.Helper()
	once.Do(setup)
	if dir == "" {
		if os.Getenv("CI") != "" {
			t.Fatalf("the TFRecord interop tests need @roboflow/tfrecords: %s", reason)
		}
		t.Skipf("skipping: needs @roboflow/tfrecords under node: %s", reason)
	}
	return dir
}

// Run runs tfr.js with args and returns its standard output.
func Run(t testing.TB, args ...string) []byte {
	t.Helper()
	d := Need(t)
	cmd := exec.Command("node", append([]string{filepath.Join(d, "tfr.js")}, args...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node tfr.js %v: %v\n%s", args, err, stderr.String())
	}
	return out
}

// Examples is what tfr.js examples and read exchange: serialized Example
// messages (base64) and their features.
type Examples struct {
	Payloads []string `json:"payloads"`
	Count    int      `json:"count"`
	K        []string `json:"k"`
	Blob     []string `json:"blob"`
	N        []int64  `json:"n"`
}

// Records returns the payloads, decoded.
func (e Examples) Records(t testing.TB) [][]byte {
	t.Helper()
	var out [][]byte
	for _, p := range e.Payloads {
		b, err := base64.StdEncoding.DecodeString(p)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, b)
	}
	return out
}

// MakeExamples has TFRecordsBuilder make n Example messages; record i has
// features k = "record-i", blob (i*977 % 70000 pseudo-random bytes) and
// n = 7i.
func MakeExamples(t testing.TB, n int) Examples {
	t.Helper()
	p := filepath.Join(t.TempDir(), "examples.json")
	Run(t, "examples", itoa(n), p)
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	var e Examples
	if err := json.Unmarshal(b, &e); err != nil {
		t.Fatal(err)
	}
	return e
}

// Build writes recs as a TFRecord file with TFRecordsBuilder.buildTFRecords.
func Build(t testing.TB, recs [][]byte) []byte {
	t.Helper()
	d := t.TempDir()
	var b64 []string
	for _, r := range recs {
		b64 = append(b64, base64.StdEncoding.EncodeToString(r))
	}
	js, _ := json.Marshal(b64)
	in, out := filepath.Join(d, "payloads.json"), filepath.Join(d, "out.tfrecord")
	if err := os.WriteFile(in, js, 0o644); err != nil {
		t.Fatal(err)
	}
	Run(t, "build", out, in)
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Read reads the TFRecord file of Example messages at path with
// TFRecordsReader, which stops at the first record whose checksums fail.
func Read(t testing.TB, path string) Examples {
	t.Helper()
	var got Examples
	if err := json.Unmarshal(Run(t, "read", path), &got); err != nil {
		t.Fatal(err)
	}
	return got
}

func itoa(n int) string {
	b, _ := json.Marshal(n)
	return string(b)
}
