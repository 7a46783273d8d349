package codec

// Appending to an existing recordio v2 file, crash-safely.
//
// Design. OpenRecordIOAppender first runs RepairRecordIO, then reads the
// header (transformers, trailer flag) and looks for the trailer from the end
// of the file (spec 8.1). Appends then take one of two paths:
//
//   - File without a trailer: new body blocks are written in place at the
//     end of the file and fsynced; Append returns after the fsync. A crash
//     leaves the old file plus a torn tail. The reference scanner reads such
//     a tail as follows: a tail ending inside the first chunk of a new block
//     lies past its scan limit and is ignored (no error); a tail ending
//     exactly on a chunk boundary inside a multi-chunk block hits a clean EOF
//     and the incomplete block is silently dropped; a tail ending inside a
//     later chunk of a multi-chunk block makes it fail with "unexpected EOF"
//     after the earlier items. Whole blocks written before the crash are read
//     as items (their Append had not returned, so keeping them is allowed).
//     RepairRecordIO (run by the next OpenRecordIOAppender) truncates the
//     file back to the end of the last block that decodes cleanly, which
//     removes every torn state.
//   - File with a trailer: Append first writes a journal file
//     "<path>.recfs-journal" holding the original size, the trailer block's
//     offset and the trailer block's bytes, protected by a CRC, and fsyncs it
//     and the directory. Only then does it overwrite the file from the
//     trailer offset with the new body blocks followed by the same trailer
//     block, fsync the file, remove the journal and fsync the directory;
//     Append returns after that. On the next open, RepairRecordIO finds the
//     journal. If it is valid and the file already ends with the saved
//     trailer block right after new blocks that all decode cleanly, the
//     append finished everything but removing its journal: the new state is
//     kept (the reference scanner reads it already) and the journal removed.
//     Otherwise the append may have been torn anywhere, so it rolls back —
//     writes the saved trailer block at the saved offset and truncates the
//     file just after it — then removes the journal. (Rolling back is always
//     correct: an Append whose journal still exists has not returned, so its
//     items may be dropped; the trailer is never lost.) A journal that is
//     torn or fails its CRC was never completed, which means the file was
//     not touched yet: it is deleted.
//
// A header that promises a trailer the file does not end with is treated as
// a file without a trailer. The trailer's content is kept as it was; an
// application whose trailer indexes the items must rewrite it itself.

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// RecordIOAppendOptions configures OpenRecordIOAppender.
type RecordIOAppendOptions struct {
	MaxItems      int   // items per block are MaxItems+1, as RecordIOWriterOptions.MaxItems
	MaxBlockBytes int64 // optional cut of blocks by raw size, as RecordIOWriterOptions.MaxBlockBytes

	fsys appendFS // nil = the operating system; tests inject crashing file systems
}

// appendFS is the file-system surface the appender uses.
type appendFS interface {
	OpenFile(name string, flag int, perm fs.FileMode) (appendFile, error)
	ReadFile(name string) ([]byte, error)
	Remove(name string) error
	SyncDir(dir string) error
}

// appendFile is an open file of an appendFS.
type appendFile interface {
	io.ReaderAt
	io.WriterAt
	Truncate(size int64) error
	Sync() error
	Close() error
	Size() (int64, error)
}

type osFS struct{}

type osFile struct{ *os.File }

func (f osFile) Size() (int64, error) {
	st, err := f.Stat()
	if err != nil {
		return 0, err
	}
	return st.Size(), nil
}

func (osFS) OpenFile(name string, flag int, perm fs.FileMode) (appendFile, error) {
	f, err := os.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	return osFile{f}, nil
}
func (osFS) ReadFile(name string) ([]byte, error) { return os.ReadFile(name) }
func (osFS) Remove(name string) error             { return os.Remove(name) }
func (osFS) SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// RecordIOJournalSuffix is appended to a file's path to name its append journal.
const RecordIOJournalSuffix = ".recfs-journal"

// rioJournalMagic starts every journal file.
var rioJournalMagic = [8]byte{'r', 'e', 'c', 'f', 's', 'J', '1', '\n'}

// encodeJournal lays out: magic, original size, trailer offset, trailer
// length (u64 LE each), trailer block bytes, CRC-32C of all previous bytes.
func encodeJournal(origSize, trailerOff int64, trailer []byte) []byte {
	b := append([]byte(nil), rioJournalMagic[:]...)
	b = binary.LittleEndian.AppendUint64(b, uint64(origSize))
	b = binary.LittleEndian.AppendUint64(b, uint64(trailerOff))
	b = binary.LittleEndian.AppendUint64(b, uint64(len(trailer)))
	b = append(b, trailer...)
	return binary.LittleEndian.AppendUint32(b, crc32c(b))
}

// decodeJournal returns the journal's fields, or ok == false if it is torn
// or damaged.
func decodeJournal(b []byte) (origSize, trailerOff int64, trailer []byte, ok bool) {
	const fixed = 8 + 24
	if len(b) < fixed+4 || !bytes.Equal(b[:8], rioJournalMagic[:]) {
		return 0, 0, nil, false
	}
	n := binary.LittleEndian.Uint64(b[24:])
	if n != uint64(len(b)-fixed-4) {
		return 0, 0, nil, false
	}
	if crc32c(b[:len(b)-4]) != binary.LittleEndian.Uint32(b[len(b)-4:]) {
		return 0, 0, nil, false
	}
	origSize = int64(binary.LittleEndian.Uint64(b[8:]))
	trailerOff = int64(binary.LittleEndian.Uint64(b[16:]))
	trailer = b[fixed : len(b)-4]
	if trailerOff < rioChunkSize || origSize != trailerOff+int64(len(trailer)) || len(trailer)%rioChunkSize != 0 {
		return 0, 0, nil, false
	}
	return origSize, trailerOff, trailer, true
}

// RepairRecordIO brings a recordio v2 file back to a consistent state after
// an append crashed: it rolls back an interrupted trailer-rewriting append
// using its journal, deletes a torn journal, and truncates a torn tail after
// the last cleanly decoding block. It reports whether it changed anything.
func RepairRecordIO(path string) (repaired bool, err error) {
	return repairRecordIO(osFS{}, path)
}

func repairRecordIO(fsys appendFS, path string) (bool, error) {
	jpath := path + RecordIOJournalSuffix
	dir := filepath.Dir(path)
	repaired := false
	j, err := fsys.ReadFile(jpath)
	switch {
	case err == nil:
		if _, toff, trailer, ok := decodeJournal(j); ok {
			f, err := fsys.OpenFile(path, os.O_RDWR, 0)
			if err != nil {
				return false, err
			}
			if appendCompleted(f, toff, trailer) {
				// The append got as far as rewriting the trailer: keep it.
				if err := f.Close(); err != nil {
					return false, err
				}
				if err := fsys.Remove(jpath); err != nil {
					return false, err
				}
				return true, fsys.SyncDir(dir)
			}
			if _, err := f.WriteAt(trailer, toff); err != nil {
				f.Close()
				return false, err
			}
			if err := f.Truncate(toff + int64(len(trailer))); err != nil {
				f.Close()
				return false, err
			}
			if err := f.Sync(); err != nil {
				f.Close()
				return false, err
			}
			if err := f.Close(); err != nil {
				return false, err
			}
		}
		if err := fsys.Remove(jpath); err != nil {
			return false, err
		}
		if err := fsys.SyncDir(dir); err != nil {
			return false, err
		}
		repaired = true
	case errors.Is(err, fs.ErrNotExist):
	default:
		return false, err
	}
	f, err := fsys.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return repaired, err
	}
	defer f.Close()
	size, err := f.Size()
	if err != nil || size == 0 {
		return repaired, err
	}
	end, err := rioConsistentEnd(f, size)
	if err != nil {
		return repaired, err
	}
	if end < size {
		if err := f.Truncate(end); err != nil {
			return repaired, err
		}
		if err := f.Sync(); err != nil {
			return repaired, err
		}
		repaired = true
	}
	return repaired, f.Close()
}

// appendCompleted reports whether a journaled append finished writing: the
// file ends with the saved trailer block, and everything before it (the old
// blocks and the new ones written from the old trailer's offset) scans with
// no damage up to exactly where that trailer starts. Such a file is what
// the append meant to leave, so repair keeps it instead of rolling back.
func appendCompleted(f appendFile, toff int64, trailer []byte) bool {
	size, err := f.Size()
	tstart := size - int64(len(trailer))
	if err != nil || len(trailer) == 0 || tstart < toff {
		return false
	}
	end := make([]byte, len(trailer))
	if _, err := f.ReadAt(end, tstart); err != nil || !bytes.Equal(end, trailer) {
		return false
	}
	s, err := NewRecordIOScanner(f, size, RecordIO, RecordIOOptions{VerifyBlocks: true})
	if err != nil {
		return false
	}
	for s.Next() {
	}
	return s.Err() == nil && len(s.Damage()) == 0 && s.goodEnd == tstart
}

// rioConsistentEnd returns the size the file should have: its size when it
// ends with a valid trailer or a cleanly decoding block, else the end of
// the last cleanly decoding block.
func rioConsistentEnd(r io.ReaderAt, size int64) (int64, error) {
	s, err := NewRecordIOScanner(r, size, RecordIO, RecordIOOptions{})
	if err != nil {
		return 0, err
	}
	if _, err := findTrailer(r, size, s.chain, s.opts.maxBlock(), s.opts.streamWindow()); err == nil {
		return size, nil // ends with a valid trailer block
	}
	if size%rioChunkSize == 0 {
		cr := rioChunkReader{r: r, size: size}
		if h, _, f := cr.chunk(size - rioChunkSize); f == nil && h.index+1 == h.total {
			start := size - int64(h.total)*rioChunkSize
			if start == 0 && h.magic == rioHeaderMagic && size == s.goodEnd {
				return size, nil
			}
			if start >= s.goodEnd && h.magic == rioBodyMagic {
				if b, _, f := s.decodeBodyBlock(start); f == nil && b.Chunks == int(h.total) {
					return size, nil
				}
			}
		}
	}
	for s.Next() {
	}
	if s.Err() != nil {
		return 0, s.Err()
	}
	return s.goodEnd, nil
}

// RecordIOAppender appends body blocks to an existing recordio v2 file,
// durably and crash-safely (see the package's recordio_append.go for the
// design). It is not safe for concurrent use, and only one appender may
// have a file open at a time.
type RecordIOAppender struct {
	fsys       appendFS
	path       string
	f          appendFile
	o          RecordIOAppendOptions
	chain      []rioTransformer
	size       int64
	trailerOff int64  // offset of the trailer block, when trailer != nil
	trailer    []byte // the trailer block's chunks, verbatim
	err        error
	buf        []byte
}

// OpenRecordIOAppender repairs the file if a previous append crashed (see
// RepairRecordIO), then opens it for appending. The file must be a recordio
// v2 file with an intact header.
func OpenRecordIOAppender(path string, o RecordIOAppendOptions) (*RecordIOAppender, error) {
	if o.fsys == nil {
		o.fsys = osFS{}
	}
	if _, err := repairRecordIO(o.fsys, path); err != nil {
		return nil, err
	}
	f, err := o.fsys.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return nil, err
	}
	a, err := newAppender(f, path, o)
	if err != nil {
		f.Close()
		return nil, err
	}
	return a, nil
}

func newAppender(f appendFile, path string, o RecordIOAppendOptions) (*RecordIOAppender, error) {
	size, err := f.Size()
	if err != nil {
		return nil, err
	}
	if size == 0 {
		return nil, fmt.Errorf("%w: %s is empty; create recordio files with NewRecordIOWriter", ErrFormat, path)
	}
	s, err := NewRecordIOScanner(f, size, RecordIO, RecordIOOptions{})
	if err != nil {
		return nil, err
	}
	if o.MaxItems <= 0 {
		o.MaxItems = DefaultRecordIOMaxItems
	}
	o.MaxItems = min(o.MaxItems, maxRecordIOMaxItems)
	a := &RecordIOAppender{fsys: o.fsys, path: path, f: f, o: o, chain: s.chain, size: size}
	// Any valid trailer block at the end is kept last, promised or not: the
	// reference stops scanning at a trailer, so blocks after it would be lost.
	if loc, err := findTrailer(f, size, s.chain, s.opts.maxBlock(), s.opts.streamWindow()); err == nil {
		a.trailerOff = loc.Block
		a.trailer = make([]byte, size-loc.Block)
		if _, err := readFullAt(f, a.trailer, loc.Block); err != nil {
			return nil, err
		}
	}
	return a, nil
}

// Append writes items as one or more body blocks (MaxItems+1 items each)
// and returns once they are durable; a file with a trailer gets its trailer
// block written again after them. After an error the appender is unusable;
// reopen it (which repairs the file).
func (a *RecordIOAppender) Append(items ...[]byte) error {
	if a.err != nil {
		return a.err
	}
	if a.f == nil {
		return errors.New("codec: recordio appender closed")
	}
	if len(items) == 0 {
		return nil
	}
	blocks, err := a.encode(items)
	if err != nil {
		a.err = err
		return err
	}
	return a.write(func(at int64) (int64, error) {
		_, err := a.f.WriteAt(blocks, at)
		return int64(len(blocks)), err
	})
}

// write appends the blocks emit writes at the given offset (returning
// their length), in place or journaled. If emit fails (an input could not
// be read), the file is put back as it was.
func (a *RecordIOAppender) write(emit func(at int64) (int64, error)) error {
	var err error
	if a.trailer == nil {
		err = a.appendInPlace(emit)
	} else {
		err = a.appendJournaled(emit)
	}
	if err != nil {
		a.err = err
	}
	return err
}

// encode packs items into transformed body blocks cut into chunks.
func (a *RecordIOAppender) encode(items [][]byte) ([]byte, error) {
	var out bytes.Buffer
	if a.buf == nil {
		a.buf = make([]byte, rioChunkSize)
	}
	var sizes []int64
	var body []byte
	flush := func() error {
		if len(sizes) == 0 {
			return nil
		}
		stored, err := applyTransformers(a.chain, packBlock(sizes, body))
		if err != nil {
			return err
		}
		sizes, body = sizes[:0], body[:0]
		_, err = writeRioBlock(&out, rioBodyMagic, stored, a.buf)
		return err
	}
	var raw int64
	for _, it := range items {
		sizes = append(sizes, int64(len(it)))
		body = append(body, it...)
		raw += int64(len(it)) + int64(uvarintLen(uint64(len(it))))
		if len(sizes) >= a.o.MaxItems+1 || (a.o.MaxBlockBytes > 0 && raw >= a.o.MaxBlockBytes) {
			if err := flush(); err != nil {
				return nil, err
			}
			raw = 0
		}
	}
	if err := flush(); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}

func (a *RecordIOAppender) appendInPlace(emit func(at int64) (int64, error)) error {
	n, err := emit(a.size)
	if err != nil {
		// Put the file back; if that fails too, the next open repairs it.
		if a.f.Truncate(a.size) == nil {
			_ = a.f.Sync()
		}
		return err
	}
	if err := a.f.Sync(); err != nil {
		return err
	}
	a.size += n
	return nil
}

func (a *RecordIOAppender) appendJournaled(emit func(at int64) (int64, error)) error {
	jpath := a.path + RecordIOJournalSuffix
	dir := filepath.Dir(a.path)
	jf, err := a.fsys.OpenFile(jpath, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	if _, err := jf.WriteAt(encodeJournal(a.size, a.trailerOff, a.trailer), 0); err != nil {
		jf.Close()
		return err
	}
	if err := jf.Sync(); err != nil {
		jf.Close()
		return err
	}
	if err := jf.Close(); err != nil {
		return err
	}
	if err := a.fsys.SyncDir(dir); err != nil {
		return err
	}
	// The journal is durable: the file may now be torn at any byte.
	n, err := emit(a.trailerOff)
	if err != nil {
		// Roll back now, as the next open would.
		if _, werr := a.f.WriteAt(a.trailer, a.trailerOff); werr == nil &&
			a.f.Truncate(a.trailerOff+int64(len(a.trailer))) == nil && a.f.Sync() == nil &&
			a.fsys.Remove(jpath) == nil {
			_ = a.fsys.SyncDir(dir)
		}
		return err
	}
	newOff := a.trailerOff + n
	if _, err := a.f.WriteAt(a.trailer, newOff); err != nil {
		return err
	}
	if err := a.f.Sync(); err != nil {
		return err
	}
	if err := a.fsys.Remove(jpath); err != nil {
		return err
	}
	if err := a.fsys.SyncDir(dir); err != nil {
		return err
	}
	a.trailerOff = newOff
	a.size = newOff + int64(len(a.trailer))
	return nil
}

// Close closes the file. Appends are already durable when Append returns.
func (a *RecordIOAppender) Close() error {
	if a.f == nil {
		return nil
	}
	err := a.f.Close()
	a.f = nil
	return err
}
