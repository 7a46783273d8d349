package open

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// TestListingOpensOnlyRegularFiles: listing a directory (DirEntries) and
// looking for record files (FileFormat, IsRecordFile) open no FIFO and no
// device node: opening one may act (a watchdog arms, a tape rewinds, a
// serial line raises DTR). The opens are counted through openHook.
func TestListingOpensOnlyRegularFiles(t *testing.T) {
	dir := t.TempDir()
	pipe := filepath.Join(dir, "pipe")
	if err := syscall.Mkfifo(pipe, 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "text"), []byte("hello"), 0o644); err != nil {
		t.Fatal(err)
	}
	// A /dev/null-like character device, where allowed (root).
	null := filepath.Join(dir, "null")
	haveNull := unix.Mknod(null, unix.S_IFCHR|0o666, int(unix.Mkdev(1, 3))) == nil
	if !haveNull {
		t.Log("mknod not permitted: no device node in the listing")
	}

	var mu sync.Mutex
	var opened []string
	openHook = func(p string) {
		mu.Lock()
		defer mu.Unlock()
		if strings.HasPrefix(p, dir) {
			opened = append(opened, filepath.Base(p))
		}
	}
	defer func() { openHook = nil }()

	ents, err := DirEntries(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if e.Name != "text" && (e.Format != "other" || e.Size != 0) {
			t.Errorf("entry %+v; want other, size 0", e)
		}
	}
	if haveNull {
		if FileFormat(null); IsRecordFile(null) != true {
			t.Errorf("IsRecordFile(device) = false; want true (the command names it)")
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(opened) != 1 || opened[0] != "text" {
		t.Errorf("opened %q; want only [text]", opened)
	}
}

// TestIsRecordFileFIFONoWait: IsRecordFile on a FIFO with no writer
// neither waits for one nor becomes its reader. A reader, even one
// waiting in open, lets a writer's O_NONBLOCK open succeed (it fails with
// ENXIO while there is none): the test writes until IsRecordFile returns,
// and fails if that open ever succeeds (it then releases a waiting open).
func TestIsRecordFileFIFONoWait(t *testing.T) {
	dir := t.TempDir()
	pipe := filepath.Join(dir, "pipe")
	if err := syscall.Mkfifo(pipe, 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	done := make(chan bool, 1)
	go func() { done <- IsRecordFile(pipe) }()
	for {
		select {
		case <-done:
			return
		default:
		}
		w, err := os.OpenFile(pipe, os.O_WRONLY|syscall.O_NONBLOCK, 0)
		if err == nil {
			w.Close()
			<-done
			t.Fatal("IsRecordFile opened the FIFO for reading")
		}
		if !errors.Is(err, syscall.ENXIO) {
			t.Fatalf("open for writing: %v", err)
		}
		runtime.Gosched()
	}
}

// TestOpenRegularBlocking: the file openRegular returns is in blocking
// mode (the O_NONBLOCK its open used is cleared once it is known to be a
// regular file), as /proc/self/fdinfo shows.
func TestOpenRegularBlocking(t *testing.T) {
	p := filepath.Join(t.TempDir(), "text")
	if err := os.WriteFile(p, []byte("hello"), 0o644); err != nil {
		t.Fatal(err)
	}
	f, _, err := openRegular(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var flags int
	err = withFd(f, func(fd int) error {
		var e error
		flags, e = unix.FcntlInt(uintptr(fd), unix.F_GETFL, 0)
		return e
	})
	if err != nil {
		t.Fatal(err)
	}
	if flags&unix.O_NONBLOCK != 0 {
		t.Errorf("file flags %#o have O_NONBLOCK", flags)
	}
}

func withFd(f *os.File, fn func(fd int) error) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var ferr error
	if err := rc.Control(func(fd uintptr) { ferr = fn(int(fd)) }); err != nil {
		return err
	}
	return ferr
}
