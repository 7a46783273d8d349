package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/recfs/recfs/codec/codectest"
	"github.com/recfs/recfs/codec/codectest/recfile"
)

// TestMain points the user cache directory at a temporary folder, so no test
// writes saved indexes into the real one.
func TestMain(m *testing.M) {
	codectest.MainInScratchDirs(m, "cmd", "XDG_CACHE_HOME", "XDG_STATE_HOME")
}

// result is what one in-process run of the command produced.
type result struct {
	code           int
	stdout, stderr string
}

// recfs runs the command line args in-process.
func recfs(t testing.TB, args ...string) result {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(context.Background(), args, &out, &errb)
	return result{code, out.String(), errb.String()}
}

// mustRun runs args and fails the test unless the exit status is 0.
func mustRun(t testing.TB, args ...string) string {
	t.Helper()
	r := recfs(t, args...)
	if r.code != 0 {
		t.Fatalf("recfs %q: exit %d, stderr:\n%s", args, r.code, r.stderr)
	}
	return r.stdout
}

// vec returns the path of a reference vector file (see codectest.Vector).
func vec(t testing.TB, rel string) string {
	t.Helper()
	return recfile.Vector(t, rel)
}

// manifest is the union of the fields the tests read from the leveldb and
// grailbio manifests.
type manifest struct {
	Size    int64           `json:"size"`
	Records json.RawMessage `json:"records"` // leveldb: list or aggregate object
	Layout  []struct {
		Offset   int64  `json:"offset"`
		TypeName string `json:"type_name"`
	} `json:"layout"`
	Header []struct {
		Key   string          `json:"key"`
		Type  string          `json:"type"`
		Value json.RawMessage `json:"value"`
	} `json:"header"`
	ItemCount *int64     `json:"item_count"`
	Items     []itemMeta `json:"items"`
	Trailer   *itemMeta  `json:"trailer"`
	Summary   *struct {
		Count        int64  `json:"count"`
		TotalBytes   int64  `json:"total_bytes"`
		ConcatSHA256 string `json:"concat_sha256"`
		LengthsSHA   string `json:"lengths_sha256"`
	} `json:"items_summary"`
}

// itemMeta is one record, item or trailer of a manifest.
type itemMeta struct {
	Len    int64  `json:"len"`
	SHA256 string `json:"sha256"`
	Loc    *struct {
		Block int64 `json:"block"`
	} `json:"loc"`
}

// logAggregate is the leveldb manifests' form for many records.
type logAggregate struct {
	Count        int64  `json:"count"`
	TotalBytes   int64  `json:"total_payload_bytes"`
	ConcatSHA256 string `json:"concat_sha256"`
	LengthsSHA   string `json:"lengths_sha256"`
}

func loadManifest(t testing.TB, rel string) manifest {
	t.Helper()
	b, err := os.ReadFile(vec(t, rel))
	if err != nil {
		t.Fatal(err)
	}
	var m manifest
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("%s: %v", rel, err)
	}
	return m
}

// records returns the per-record list of a manifest (leveldb records or
// grailbio items), or nil when the manifest only has an aggregate.
func (m manifest) records(t testing.TB) []itemMeta {
	if m.ItemCount != nil {
		return m.Items
	}
	var rs []itemMeta
	if err := json.Unmarshal(m.Records, &rs); err != nil {
		return nil
	}
	return rs
}

func sha(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// TestEveryCommandDocumented walks the whole command tree, including the
// commands other files register, and wants a short line, a long text and an
// example for each.
func TestEveryCommandDocumented(t *testing.T) {
	root := newRootCmd(&bytes.Buffer{}, &bytes.Buffer{})
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if c.Name() != "help" {
			if c.Short == "" || c.Long == "" || c.Example == "" {
				t.Errorf("%q lacks Short, Long or Example", c.CommandPath())
			}
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
}

func TestMissingCommandAndHelp(t *testing.T) {
	r := recfs(t)
	if r.code != exitUsage || !strings.Contains(r.stderr, "missing command") {
		t.Errorf("no args: exit %d, stderr %q; want 2 and a usage message", r.code, r.stderr)
	}
	for _, c := range []string{"info", "ls", "cat", "verify", "index", "sample"} {
		out := mustRun(t, c, "--help")
		if !strings.Contains(out, "Examples:") || !strings.Contains(out, "recfs "+c) {
			t.Errorf("%s --help lacks an example section:\n%s", c, out)
		}
	}
	if out := mustRun(t, "completion", "bash"); !strings.Contains(out, "recfs") {
		t.Errorf("completion bash printed no script")
	}
}
