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

// TestAppendCreateMixedRace: recfs append --create of three formats race
// on a file that does not exist yet. Whichever wins makes the file its
// format; every other one is refused (exit 2), whether it lost the O_EXCL
// create to the winner or took the new, still empty file's lock before the
// winner did: none exits 0 having appended in another format than it
// asked for. (Losers of O_EXCL used to open the winner's empty file as a
// leveldb log and append in the winner's format, exit 0.)
func TestAppendCreateMixedRace(t *testing.T) {
	rounds := 40
	if soak() {
		rounds = 400
	}
	dir := t.TempDir()
	formats := []string{"tfrecord", "leveldb", "recordio"}
	for round := range rounds {
		path := filepath.Join(dir, fmt.Sprintf("r%d", round))
		codes := make([]int, len(formats))
		var wg sync.WaitGroup
		for i, f := range formats {
			in := filepath.Join(dir, fmt.Sprintf("in-%d-%s", round, f))
			if err := os.WriteFile(in, []byte("rec-"+f), 0o644); err != nil {
				t.Fatal(err)
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				r := runRecfs(t, "append", "--create", f, path, in)
				if r.code != 0 && r.code != 2 {
					t.Errorf("round %d: append --create %s: exit %d: %s", round, f, r.code, r.stderr)
				}
				codes[i] = r.code
			}()
		}
		wg.Wait()
		info := runRecfs(t, "info", "--no-cache", path)
		acked := 0
		for i, f := range formats {
			if codes[i] != 0 {
				continue
			}
			acked++
			if !strings.Contains(info.stdout, "format:   "+f+"\n") {
				t.Errorf("round %d: append --create %s exited 0; the file: %s", round, f, strings.ReplaceAll(info.stdout, "\n", " | "))
			}
		}
		if want := fmt.Sprintf("records:  %d\n", acked); acked == 0 || !strings.Contains(info.stdout, want) || !strings.Contains(info.stdout, "damage:   none") {
			t.Errorf("round %d: %d appends exited 0; the file: %s", round, acked, strings.ReplaceAll(info.stdout, "\n", " | "))
		}
	}
}
