package main

import (
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// TestOpenStatusPipeAbandonIsPipe: the abandon descriptor counts only when
// it is a pipe; a regular file (readable, never "abandoned" on purpose)
// or a descriptor that is not open is ignored.
func TestOpenStatusPipeAbandonIsPipe(t *testing.T) {
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
			s := openStatusPipe(strconv.Itoa(fd), tc.abandon)
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
func abandoned(s *statusPipe) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.abandoned
}
