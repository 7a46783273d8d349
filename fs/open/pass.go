package open

import (
	"context"
	"errors"
	"os"
	"syscall"

	"github.com/recfs/recfs/index"
)

// Every is a record file opened once for reading every record in file
// order, in one of two ways over the same opened file: one pass with no
// table (Pass), where index.NewPass reads the format, or else a sequential
// table (Seq). For cat of every record of a file.
type Every struct {
	target string
	o      Options
	f      *os.File // the local file; nil for an object or a URL
	size   int64
}

// OpenEvery opens the record file target names for Every's two ways: a
// local file now (failing as Sequential would to open it), an object or a
// URL when Seq is called.
func OpenEvery(target string, o Options) (*Every, error) {
	e := &Every{target: target, o: o}
	if KindOf(target) != Local {
		return e, nil
	}
	f, fi, err := openRegular(target)
	if err != nil {
		return nil, err
	}
	e.f, e.size = f, fi.Size()
	return e, nil
}

// Pass starts one pass over the records of the local file, each read and
// checked once, with no table built (see index.NewPass). It fails with
// index.ErrNoPass for an object or a URL, after Seq, and for what NewPass
// refuses, or with what detecting the format met; Seq still reads the
// file then. The pass reads the file until Close.
func (e *Every) Pass(ctx context.Context) (*index.Pass, error) {
	if e.f == nil {
		return nil, index.ErrNoPass
	}
	return index.NewPass(ctx, e.f, e.size, indexOptions(e.target, e.o.Index))
}

// Seq scans the file afresh into a table for reads in file order, as
// Sequential does; the Seq takes the opened file over (closing it with
// itself, on failure too), so that Close then has nothing to close.
func (e *Every) Seq(ctx context.Context) (Seq, error) {
	f := e.f
	if f == nil {
		return Sequential(ctx, e.target, e.o)
	}
	e.f = nil
	return seqOf(ctx, e.target, f, e.size, e.o)
}

// Close closes the local file unless Seq took it over.
func (e *Every) Close() error {
	if e.f == nil {
		return nil
	}
	f := e.f
	e.f = nil
	return f.Close()
}

// openHook, when set (by tests), is called with the path of each open
// openRegular makes.
var openHook func(path string)

// openRegular opens the local file at path for reading, refusing what is
// not a regular file (CheckRegular). A stat first refuses what path names
// now without opening it: opening a device may act (a watchdog arms, a
// tape rewinds, a serial line raises DTR). What was opened is looked at
// again (fstat), as the path may have been replaced in between. The open
// neither waits (O_NONBLOCK: a FIFO swapped in, with no writer, would hang
// it before it could be refused) nor takes a terminal (O_NOCTTY); once
// the file is known to be regular its descriptor is put back in blocking
// mode. An open that would block on a regular file (breaking a lease,
// EWOULDBLOCK) is made again, waiting.
func openRegular(path string) (*os.File, os.FileInfo, error) {
	if fi, err := os.Stat(path); err == nil {
		if err := CheckRegular(path, fi); err != nil {
			return nil, nil, err
		}
	}
	if openHook != nil {
		openHook(path)
	}
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOCTTY, 0)
	if errors.Is(err, syscall.EWOULDBLOCK) {
		if fi, serr := os.Stat(path); serr == nil && fi.Mode().IsRegular() {
			if openHook != nil {
				openHook(path)
			}
			f, err = os.OpenFile(path, os.O_RDONLY|syscall.O_NOCTTY, 0)
		}
	}
	if err != nil {
		return nil, nil, err
	}
	fi, err := f.Stat()
	if err == nil {
		err = CheckRegular(path, fi)
	}
	if err == nil {
		err = setBlocking(f)
	}
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return f, fi, nil
}

// setBlocking clears O_NONBLOCK on f's descriptor.
func setBlocking(f *os.File) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var serr error
	if err := rc.Control(func(fd uintptr) { serr = syscall.SetNonblock(int(fd), false) }); err != nil {
		return err
	}
	if serr != nil {
		return &os.PathError{Op: "fcntl", Path: f.Name(), Err: serr}
	}
	return nil
}
