package e2e

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// TestKilledMountGroupCommit: 8 writers create files in one --rw mount at
// once (so their closes go in groups), a fifth of them fsync'ing before
// the close, until the daemon is SIGKILLed after 150 acknowledged
// records. Every file whose close (and fsync) returned 0 is a record of
// the source exactly once, on both backends and for leveldb and recordio
// with a trailer; nothing else is in it.
func TestKilledMountGroupCommit(t *testing.T) {
	needFUSE(t)
	for _, backend := range []string{"gofuse", "bazil"} {
		for _, k := range appendKinds {
			t.Run(backend+"/"+k.name, func(t *testing.T) {
				needBackend(t, backend)
				src := filepath.Join(t.TempDir(), "g")
				createForAppends(t, src, k)
				mnt := newMountDir(t)
				m := startMount(t, src, mnt, "--rw", "--no-cache", "--backend", backend)
				var (
					mu       sync.Mutex
					outcomes []appendOutcome
					acked    atomic.Int64
					wg       sync.WaitGroup
				)
				enough := make(chan struct{})
				var once sync.Once
				for w := range 8 {
					wg.Add(1)
					go func() {
						defer wg.Done()
						for i := 0; ; i++ {
							key := fmt.Sprintf("w%d:%d", w, i)
							err := writeRecordFile(filepath.Join(mnt, fmt.Sprintf("g%d-%d", w, i)),
								append([]byte(key+"|"), bytes.Repeat([]byte("g"), 50+i%200)...), i%5 == 0)
							code := 0
							if err != nil {
								code = -1 // the daemon is gone: unknown
							}
							mu.Lock()
							outcomes = append(outcomes, appendOutcome{key, code, fmt.Sprint(err)})
							mu.Unlock()
							if err != nil {
								return
							}
							if acked.Add(1) == 150 {
								once.Do(func() { close(enough) })
							}
						}
					}()
				}
				select {
				case <-enough:
				case <-time.After(mountTimeout):
					t.Fatalf("150 records not acknowledged in %v", mountTimeout)
				}
				if err := m.cmd.Process.Signal(syscall.SIGKILL); err != nil {
					t.Fatal(err)
				}
				<-m.done
				_ = syscall.Unmount(mnt, syscall.MNT_DETACH)
				wg.Wait()
				checkOutcomes(t, outcomes, presentKeys(t, src, k), []string{"seed"}, true)
			})
		}
	}
}

// writeRecordFile creates path with data, fsync'ing it before the close
// when sync is set.
func writeRecordFile(path string, data []byte, sync bool) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if sync {
		if err := f.Sync(); err != nil {
			f.Close()
			return err
		}
	}
	return f.Close()
}
