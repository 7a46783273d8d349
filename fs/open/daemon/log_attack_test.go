package daemon

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// TestLogFileRefusesPlanted: a daemon's log file is never opened where
// another user could have planted something: not in a directory others
// may write to (such as /tmp), not a FIFO (whose open would hang the
// daemon), not a file of another user's, not a hard link. Each is refused
// at once with an error, and nothing is written.
func TestLogFileRefusesPlanted(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to give files away")
	}
	for _, tc := range []struct {
		name  string
		plant func(t *testing.T, dir, path string)
	}{
		{"shared directory", func(t *testing.T, dir, path string) {
			if err := os.Chmod(dir, 0o1777); err != nil {
				t.Fatal(err)
			}
		}},
		{"fifo", func(t *testing.T, dir, path string) {
			if err := syscall.Mkfifo(path, 0o600); err != nil {
				t.Fatal(err)
			}
		}},
		{"another user's file", func(t *testing.T, dir, path string) {
			if err := os.WriteFile(path, nil, 0o666); err != nil {
				t.Fatal(err)
			}
			if err := os.Chown(path, 1001, 1001); err != nil {
				t.Fatal(err)
			}
		}},
		{"hard link", func(t *testing.T, dir, path string) {
			victim := filepath.Join(dir, "victim")
			if err := os.WriteFile(victim, []byte("secret\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			if err := os.Link(victim, path); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "daemon.log")
			tc.plant(t, dir, path)
			done := make(chan error, 1)
			go func() {
				f, err := openLogFile(path)
				if err == nil {
					f.WriteString("logged\n")
					f.Close()
				}
				done <- err
			}()
			select {
			case err := <-done:
				if err == nil {
					t.Fatal("log file opened and written")
				}
				t.Logf("refused: %v", err)
			case <-time.After(3 * time.Second):
				// Unblock the open so the goroutine ends.
				if r, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0); err == nil {
					defer r.Close()
				}
				<-done
				t.Fatal("opening the log file hung")
			}
		})
	}
}
