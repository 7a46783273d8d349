package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/recfs/recfs/codec/codectest"
	"github.com/recfs/recfs/index/report"
)

// recycledWAL writes the WAL file of a running RocksDB/pebble database that
// reused an older log's file: records of log 7 written over an old log 6
// that ran two blocks further. The live log ends inside an old chunk. It
// returns the path and the offset where the live log ends.
func recycledWAL(t *testing.T) (string, int64) {
	t.Helper()
	var old []byte
	for i := 0; len(old) < 3*32768; i++ {
		c := codectest.RecycledChunk(6, logPayload(100+i, 3000))
		if room := 32768 - len(old)%32768; room < len(c) {
			old = append(old, make([]byte, room)...)
		}
		old = append(old, c...)
	}
	var live []byte
	for i := range 3 {
		live = append(live, codectest.RecycledChunk(7, logPayload(i, int64(1000+i)))...)
	}
	copy(old, live)
	p := filepath.Join(t.TempDir(), "000007.log")
	if err := os.WriteFile(p, old, 0o644); err != nil {
		t.Fatal(err)
	}
	return p, int64(len(live))
}

// TestStaleTail checks that the end of a recycled log is reported as a
// stale tail by info and verify, and that verify passes it (exit 0): a
// healthy running database's WAL is not damaged.
func TestStaleTail(t *testing.T) {
	p, liveEnd := recycledWAL(t)
	fi, _ := os.Stat(p)
	r := recfs(t, "verify", "--json", p)
	var v report.Verification
	if err := json.Unmarshal([]byte(r.stdout), &v); err != nil {
		t.Fatalf("verify --json: %v\n%s", err, r.stdout)
	}
	if r.code != 0 || !v.OK || v.Records != 3 || len(v.Damage) != 1 || v.Damage[0].Kind != "stale" ||
		v.Damage[0].Offset != liveEnd || v.Damage[0].Offset+v.Damage[0].Length != fi.Size() {
		t.Errorf("verify: exit %d, %+v; want OK with a stale tail from %d", r.code, v, liveEnd)
	}
	text := recfs(t, "verify", p)
	if text.code != 0 || !strings.Contains(text.stdout, "damage:   none\n") ||
		!strings.Contains(text.stdout, "stale:    offset ") || !strings.HasSuffix(text.stdout, "OK\n") {
		t.Errorf("verify text: exit %d\n%s", text.code, text.stdout)
	}
	info := mustRun(t, "info", "--no-cache", p)
	if !strings.Contains(info, "damage:   none\n") || !strings.Contains(info, "stale:    offset ") {
		t.Errorf("info:\n%s", info)
	}
	// Real damage in the live log still fails verify.
	b, _ := os.ReadFile(p)
	b[20] ^= 1
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	if r := recfs(t, "verify", p); r.code != exitFailure || !strings.Contains(r.stdout, "DAMAGED") {
		t.Errorf("verify of a damaged live log: exit %d\n%s", r.code, r.stdout)
	}
}
