package index

import (
	"bytes"
	"context"
	"io"
	"os"
)

// memInput is the largest input OpenInputs reads into memory.
const memInput = 16 << 20

// Inputs are the records of an append read from named inputs, one record
// an input or one a line: the lines, read while they are appended; the
// inputs in memory; or, when one input is large, every input streamed from
// a file. Close closes the files.
type Inputs struct {
	lines   RecordStream
	recs    [][]byte
	streams []Stream
	files   []*os.File
}

// OpenInputs opens the inputs names ("-" is stdin; none means "-") before
// anything is appended, so that a failure to read any of them leaves the
// file untouched. With lines each line of each input is a record, read a
// chunk at a time as it is appended (LineRecords). Otherwise each input is
// a record: small inputs are read into memory; when one is larger than
// memInput bytes every input is streamed into the file a chunk at a time
// instead (a large stdin or pipe is first copied to an anonymous
// temporary file, since a record's size must be known before its bytes),
// so memory stays bounded whatever the record size. When it fails, it
// closes what it opened.
func OpenInputs(stdin io.Reader, names []string, lines bool) (*Inputs, error) {
	if len(names) == 0 {
		names = []string{"-"}
	}
	a := &Inputs{}
	if lines {
		if err := a.openLines(stdin, names); err != nil {
			a.Close()
			return nil, err
		}
		return a, nil
	}
	for _, name := range names {
		src, err := openInput(stdin, name)
		if err != nil {
			a.Close()
			return nil, err
		}
		if src.f != nil {
			a.files = append(a.files, src.f)
		}
		a.streams = append(a.streams, src.item())
		a.recs = append(a.recs, src.b)
	}
	if len(a.files) > 0 {
		a.recs = nil
	} else {
		a.streams = nil
	}
	return a, nil
}

// AppendTo appends the inputs' records to t and returns the number of the
// first and how many there were.
func (a *Inputs) AppendTo(ctx context.Context, t *Table, o AppendOptions) (first, count int64, err error) {
	switch {
	case a.lines != nil:
		return t.AppendStream(ctx, a.lines, o)
	case a.streams != nil:
		first, err = t.AppendFrom(ctx, a.streams, o)
		return first, int64(len(a.streams)), err
	}
	first, err = t.Append(ctx, a.recs, o)
	return first, int64(len(a.recs)), err
}

// Close closes the files the inputs opened.
func (a *Inputs) Close() {
	for _, f := range a.files {
		f.Close()
	}
}

// openLines opens every input (stdin for "-") before anything is written,
// and makes a.lines the stream of their lines, read as they are appended.
func (a *Inputs) openLines(stdin io.Reader, names []string) error {
	rs := make([]io.Reader, 0, len(names))
	for _, name := range names {
		if name == "-" {
			rs = append(rs, stdin)
			continue
		}
		f, err := os.Open(name)
		if err != nil {
			return err
		}
		a.files = append(a.files, f)
		rs = append(rs, f)
	}
	a.lines = LineRecords(rs...)
	return nil
}

// input is one opened input: its bytes, or a file holding them.
type input struct {
	b    []byte
	f    *os.File
	size int64
}

// item returns the input as a stream.
func (in input) item() Stream {
	if in.f != nil {
		return Stream{R: io.NewSectionReader(in.f, 0, in.size), Size: in.size}
	}
	return Stream{R: bytes.NewReader(in.b), Size: int64(len(in.b))}
}

// openInput opens an input: a regular file larger than memInput stays a
// file, read later; anything else is read up to memInput bytes, and what
// is longer (a large standard input or pipe) is copied to an anonymous
// temporary file.
func openInput(stdin io.Reader, name string) (input, error) {
	r := stdin
	if name != "-" {
		f, err := os.Open(name)
		if err != nil {
			return input{}, err
		}
		if st, err := f.Stat(); err == nil && st.Mode().IsRegular() && st.Size() > memInput {
			return input{f: f, size: st.Size()}, nil
		}
		defer f.Close()
		r = f
	}
	head, err := io.ReadAll(io.LimitReader(r, memInput+1))
	if err != nil {
		return input{}, err
	}
	if len(head) <= memInput {
		return input{b: head}, nil
	}
	tmp, err := os.CreateTemp("", "recfs-append-")
	if err != nil {
		return input{}, err
	}
	if err := os.Remove(tmp.Name()); err != nil {
		tmp.Close()
		return input{}, err
	}
	if _, err := tmp.Write(head); err != nil {
		tmp.Close()
		return input{}, err
	}
	head = nil
	n, err := io.CopyBuffer(tmp, r, make([]byte, 1<<20))
	if err != nil {
		tmp.Close()
		return input{}, err
	}
	return input{f: tmp, size: memInput + 1 + n}, nil
}
