package interop

// The independent TFRecord implementation: the npm package
// @roboflow/tfrecords, driven by testdata/tfrecords-node/tfr.js under node.
// .ci/run installs node and npm; elsewhere the tests skip when they are
// missing, and fail under CI.

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

var (
	nodeOnce sync.Once
	nodeDir  string
	nodeErr  string
)

// tfrNode returns a directory holding tfr.js with its node_modules
// installed (npm ci into the user cache, once per lockfile), or skips.
func tfrNode(t testing.TB) string {
	t.Helper()
	nodeOnce.Do(func() {
		for _, tool := range []string{"node", "npm"} {
			if _, err := exec.LookPath(tool); err != nil {
				nodeErr = tool + " is not installed (.ci/run installs nodejs and npm)"
				return
			}
		}
		src := filepath.Join("testdata", "tfrecords-node")
		lock, err := os.ReadFile(filepath.Join(src, "package-lock.json"))
		if err != nil {
			nodeErr = err.Error()
			return
		}
		cache, err := os.UserCacheDir()
		if err != nil {
			cache = os.TempDir()
		}
		dir := filepath.Join(cache, "recfs-interop", "tfrecords-node")
		os.MkdirAll(dir, 0o755)
		for _, f := range []string{"package.json", "package-lock.json", "tfr.js"} {
			b, err := os.ReadFile(filepath.Join(src, f))
			if err == nil {
				err = os.WriteFile(filepath.Join(dir, f), b, 0o644)
			}
			if err != nil {
				nodeErr = err.Error()
				return
			}
		}
		stamp := filepath.Join(dir, "node_modules", ".recfs-lock")
		if old, err := os.ReadFile(stamp); err != nil || !bytes.Equal(old, lock) {
			cmd := exec.Command("npm", "ci", "--no-audit", "--no-fund", "--loglevel=error")
			cmd.Dir = dir
			if out, err := cmd.CombinedOutput(); err != nil {
				nodeErr = "npm ci: " + err.Error() + ": " + string(out)
				return
			}
			os.WriteFile(stamp, lock, 0o644)
		}
		nodeDir = dir
	})
	if nodeDir == "" {
		if os.Getenv("CI") != "" {
			t.Fatalf("the TFRecord interop tests need @roboflow/tfrecords: %s", nodeErr)
		}
		t.Skipf("skipping the TFRecord interop test against @roboflow/tfrecords: %s", nodeErr)
	}
	return nodeDir
}

// runTFR runs tfr.js with args and returns its standard output.
func runTFR(t testing.TB, args ...string) []byte {
	t.Helper()
	dir := tfrNode(t)
	cmd := exec.Command("node", append([]string{filepath.Join(dir, "tfr.js")}, args...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node tfr.js %v: %v\n%s", args, err, stderr.String())
	}
	return out
}

// nodeExamples is what tfr.js examples and read exchange.
type nodeExamples struct {
	Payloads []string `json:"payloads"` // serialized Example messages, base64
	Count    int      `json:"count"`
	K        []string `json:"k"`
	Blob     []string `json:"blob"`
	N        []int64  `json:"n"`
}

// nodeBuild writes recs as a TFRecord file with TFRecordsBuilder.
func nodeBuild(t testing.TB, recs [][]byte) []byte {
	t.Helper()
	dir := t.TempDir()
	var b64 []string
	for _, r := range recs {
		b64 = append(b64, encodeB64(r))
	}
	js, _ := json.Marshal(b64)
	in, out := filepath.Join(dir, "payloads.json"), filepath.Join(dir, "out.tfrecord")
	if err := os.WriteFile(in, js, 0o644); err != nil {
		t.Fatal(err)
	}
	runTFR(t, "build", out, in)
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// nodeRead reads a TFRecord file of Example messages with TFRecordsReader.
func nodeRead(t testing.TB, file []byte) nodeExamples {
	t.Helper()
	p := filepath.Join(t.TempDir(), "in.tfrecord")
	if err := os.WriteFile(p, file, 0o644); err != nil {
		t.Fatal(err)
	}
	var got nodeExamples
	if err := json.Unmarshal(runTFR(t, "read", p), &got); err != nil {
		t.Fatal(err)
	}
	return got
}
