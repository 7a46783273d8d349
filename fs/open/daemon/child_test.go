package daemon

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// TestOpenChildAbandonIsPipe: the abandon descriptor counts only when
// it is a pipe; a regular file (readable, never "abandoned" on purpose)
// or a descriptor that is not open is ignored.
func TestOpenChildAbandonIsPipe(t *testing.T) {
	file, err := os.Create(filepath.Join(t.TempDir(), "f"))
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	if _, err := file.WriteString("x"); err != nil {
		t.Fatal(err)
	}
	ar, aw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer ar.Close()
	defer aw.Close()
	for _, tc := range []struct {
		name    string
		abandon string
		want    bool
	}{
		{"pipe", strconv.Itoa(int(ar.Fd())), true},
		{"regular file", strconv.Itoa(int(file.Fd())), false},
		{"not open", "999", false},
		{"not a number", "x", false},
		{"unset", "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sr, sw, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			defer sr.Close()
			fd, err := syscall.Dup(int(sw.Fd()))
			sw.Close()
			if err != nil {
				t.Fatal(err)
			}
			s := openChild(strconv.Itoa(fd), tc.abandon, nil)
			if s == nil {
				t.Fatal("no status pipe")
			}
			defer s.f.Close()
			if got := s.abandon >= 0; got != tc.want {
				t.Fatalf("abandon %q taken: %v, want %v", tc.abandon, got, tc.want)
			}
			if tc.want {
				// A byte ends the pipe's watcher (it would take the
				// pipe's end for its parent's death): wait for it.
				if _, err := aw.Write([]byte{'x'}); err != nil {
					t.Fatal(err)
				}
				for !abandoned(s) {
					time.Sleep(time.Millisecond)
				}
			}
		})
	}
}

// abandoned reads s.abandoned under its lock.
func abandoned(s *Child) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.abandoned
}

// TestChildSendsLastProgress: a daemon child's progress calls within
// one interval end in one line carrying the last of them, so the parent
// shows where a build stands even when it stalls right after.
func TestChildSendsLastProgress(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	s := &Child{f: w}
	for done := int64(1); done <= 3; done++ {
		s.Progress(done, 100)
	}
	// Usually one line, "progress 3 100"; a machine that paused between
	// the calls for a whole interval may send an earlier one first.
	if err := r.SetReadDeadline(time.Now().Add(10 * time.Second)); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(r)
	last := int64(0)
	for last != 3 && sc.Scan() {
		var done, total int64
		if _, err := fmt.Sscanf(sc.Text(), "progress %d %d", &done, &total); err != nil || done <= last || total != 100 {
			t.Fatalf("line %q after progress %d (%v)", sc.Text(), last, err)
		}
		last = done
	}
	if last != 3 {
		t.Fatalf("the last progress never reached the pipe (last sent: %d, %v)", last, sc.Err())
	}
}
