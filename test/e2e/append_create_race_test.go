package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// TestAppendCreateRace: recfs append --create tfrecord processes started
// together on a file that does not exist yet race to create it; the
// losers append to the file the winner made. Every append that exits 0
// is in the file afterwards, and the file is one format whole. (Losers
// used to take the winner's empty file for a leveldb log and cut its
// first TFRecord record as a torn tail.)
func TestAppendCreateRace(t *testing.T) {
	rounds := 6
	if soak() {
		rounds = 100
	}
	dir := t.TempDir()
	for round := range rounds {
		path := filepath.Join(dir, fmt.Sprintf("r%d.tfrecord", round))
		var mu sync.Mutex
		acked := map[string]bool{}
		var wg sync.WaitGroup
		for w := range 3 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range 3 {
					rec := fmt.Sprintf("w%d-%d", w, i)
					in := filepath.Join(dir, fmt.Sprintf("in-%d-%s", round, rec))
					if err := os.WriteFile(in, []byte(rec), 0o644); err != nil {
						t.Error(err)
						return
					}
					if r := runRecfs(t, "append", "--create", "tfrecord", path, in); r.code == 0 {
						mu.Lock()
						acked[rec] = true
						mu.Unlock()
					} else {
						t.Errorf("append %s: exit %d: %s", rec, r.code, r.stderr)
					}
				}
			}()
		}
		wg.Wait()
		info := runRecfs(t, "info", "--no-cache", path)
		if !strings.Contains(info.stdout, "damage:   none") {
			t.Fatalf("round %d: %s", round, info.stdout)
		}
		found := map[string]bool{}
		for n := range len(acked) + 1 {
			r := runRecfs(t, "cat", "--no-cache", path, fmt.Sprint(n))
			if r.code != 0 {
				break
			}
			found[r.stdout] = true
		}
		for rec := range acked {
			if !found[rec] {
				t.Errorf("round %d: acknowledged %s is not in the file (%d of %d found)\n%s", round, rec, len(found), len(acked), info.stdout)
			}
		}
	}
}
