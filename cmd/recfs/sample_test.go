package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/recfs/recfs/codec/recordio"
	"github.com/recfs/recfs/codec/sample"
	"github.com/recfs/recfs/index/report"
)

// TestLegacyEncoderMatchesReference re-encodes the items of the reference
// legacy packed vector (written by the grailbio legacy writer with
// MaxItems=4) and expects the very same bytes.
func TestLegacyEncoderMatchesReference(t *testing.T) {
	path := vec(t, "grailbio/legacy-packed.grail-rpk")
	m := loadManifest(t, "grailbio/legacy-packed.grail-rpk.json")
	items := make([][]byte, len(m.Items))
	for i, it := range m.Items {
		out := mustRun(t, "cat", "--no-cache", path, strconv.Itoa(i))
		if sha([]byte(out)) != it.SHA256 {
			t.Fatalf("item %d read back wrong; cannot check the encoder", i)
		}
		items[i] = []byte(out)
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if got := recordio.AppendLegacyPacked(nil, items, 4); !bytes.Equal(got, want) {
		t.Errorf("encoded %d bytes, reference file has %d; they differ", len(got), len(want))
	}
}

func TestSampleFilesReadBack(t *testing.T) {
	dir := t.TempDir()
	out := mustRun(t, "sample", dir)
	for _, name := range []string{sample.LogName, sample.RIOName, sample.LegacyName} {
		if !strings.Contains(out, filepath.Join(dir, name)) {
			t.Errorf("sample did not report %s: %q", name, out)
		}
	}
	// Expected contents come from the sample generators; the test checks
	// they survive the writers, the detection and the index.
	wantLog := make([][]byte, 1000)
	for i := range wantLog {
		wantLog[i] = sample.Event(i)
	}
	wantLog[500] = sample.Blob(100 << 10)
	notes := make([][]byte, len(sample.Notes))
	for i, s := range sample.Notes {
		notes[i] = []byte(s)
	}
	books := make([][]byte, len(sample.Books))
	for i, s := range sample.Books {
		books[i] = []byte(s)
	}
	for _, c := range []struct {
		name, format string
		want         [][]byte
		header       []string // keys in order
		trailer      bool
	}{
		{sample.LogName, "leveldb", wantLog, nil, false},
		{sample.RIOName, "recordio", books, []string{"transformer", "trailer", "app", "schema", "version"}, true},
		{sample.LegacyName, "recordio-legacy", notes, nil, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(dir, c.name)
			var in report.Info
			if err := json.Unmarshal([]byte(mustRun(t, "info", "--json", path)), &in); err != nil {
				t.Fatal(err)
			}
			var keys []string
			for _, h := range in.Header {
				keys = append(keys, h.Key)
			}
			if in.Format != c.format || in.Records != int64(len(c.want)) || in.HasTrailer != c.trailer ||
				strings.Join(keys, ",") != strings.Join(c.header, ",") || len(in.Damage) != 0 {
				t.Errorf("info: %+v", in)
			}
			got := mustRun(t, "cat", path, "--sep", `\x00`)
			want := append(bytes.Join(c.want, []byte{0}), 0)
			if got != string(want) {
				t.Errorf("cat: %d bytes, want %d", len(got), len(want))
			}
			if r := recfs(t, "verify", path); r.code != 0 {
				t.Errorf("verify: exit %d\n%s", r.code, r.stdout)
			}
		})
	}
	var toc struct {
		Items int `json:"items"`
		TOC   []struct {
			Item  int    `json:"item"`
			Title string `json:"title"`
		} `json:"toc"`
	}
	if err := json.Unmarshal([]byte(mustRun(t, "cat", "--trailer", filepath.Join(dir, sample.RIOName))), &toc); err != nil ||
		toc.Items != len(sample.Books) || len(toc.TOC) != len(sample.Books) || !strings.HasPrefix(sample.Books[3], toc.TOC[3].Title+"|") {
		t.Errorf("trailer: %+v, %v", toc, err)
	}
}

func TestSampleIsReproducible(t *testing.T) {
	a, b := t.TempDir(), t.TempDir()
	mustRun(t, "sample", a)
	mustRun(t, "sample", b)
	for _, name := range []string{sample.LogName, sample.RIOName, sample.LegacyName} {
		x, _ := os.ReadFile(filepath.Join(a, name))
		y, _ := os.ReadFile(filepath.Join(b, name))
		if len(x) == 0 || !bytes.Equal(x, y) {
			t.Errorf("%s differs between two runs (or is empty)", name)
		}
	}
}
