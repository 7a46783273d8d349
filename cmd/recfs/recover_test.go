package main

import (
	"encoding/json"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/recfs/recfs/index/report"
)

// damagedCopy copies a vector and flips the low bit of the byte at off.
func damagedCopy(t *testing.T, rel string, off int64) string {
	t.Helper()
	p := copyVector(t, rel)
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	b[off] ^= 1
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestLostRecordIOHeader damages the header block of grailbio vectors (one
// per transformer): cat, ls and verify still serve every body item, verify
// reports the header block as damage and exits 1. The reference reader
// returns nothing for these files.
func TestLostRecordIOHeader(t *testing.T) {
	for _, c := range []struct{ file, manifest string }{
		{"grailbio/plain-small.rio", "grailbio/plain-small.rio.json"},
		{"grailbio/zstd-purego.rio", "grailbio/zstd-purego.rio.json"},
		{"grailbio/flate.rio", "grailbio/flate.rio.json"},
	} {
		t.Run(c.file, func(t *testing.T) {
			recs := loadManifest(t, c.manifest).records(t)
			path := damagedCopy(t, c.file, 30)
			for i, r := range recs {
				out := mustRun(t, "cat", "--no-cache", path, strconv.Itoa(i))
				if int64(len(out)) != r.Len || sha([]byte(out)) != r.SHA256 {
					t.Fatalf("cat %d: %d bytes sha %s; manifest %d bytes sha %s", i, len(out), sha([]byte(out)), r.Len, r.SHA256)
				}
			}
			n := 0
			for range strings.Lines(mustRun(t, "ls", "--no-cache", path)) {
				n++
			}
			if n != len(recs) {
				t.Errorf("ls lists %d items, want %d", n, len(recs))
			}
			if info := mustRun(t, "info", "--no-cache", path); !strings.Contains(info, "header block lost") {
				t.Errorf("info does not say the header block was lost:\n%s", info)
			}
			res := recfs(t, "verify", "--json", path)
			var v report.Verification
			if err := json.Unmarshal([]byte(res.stdout), &v); err != nil {
				t.Fatalf("verify --json: %v\n%s", err, res.stdout)
			}
			if res.code != exitFailure || v.OK || v.Records != int64(len(recs)) || len(v.ReadErrors) != 0 ||
				len(v.Damage) != 1 || v.Damage[0].Offset != 0 || v.Damage[0].Length != 32768 || v.Damage[0].Kind != "corrupt" {
				t.Errorf("verify: exit %d, %+v", res.code, v)
			}
		})
	}
}
