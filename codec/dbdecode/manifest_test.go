package dbdecode

import (
	"errors"
	"testing"
)

func TestVersionEdit(t *testing.T) {
	tests := []struct {
		name string
		rec  []byte
		want string
		err  error
	}{
		{"leveldb", rec(1, "leveldb.BytewiseComparator", 2, 5, 9, 0, 3, 7, 4, 42,
			5, 1, ikey("k", 9, 1), 6, 2, 11, 7, 0, 12, 1234, ikey("a", 1, 1), ikey("z", 40, 0)),
			"comparator leveldb.BytewiseComparator\nlog-number 5\nprev-log-number 0\nnext-file 7\nlast-seq 42\n" +
				"compact-pointer L1 k#9,1\ndelete-file L2 11\nadd-file L0 12 size=1234 smallest=a#1,1 largest=z#40,0\n", nil},
		{"new-file-2 and 3", rec(100, 1, 13, 99, ikey("a", 1, 1), ikey("b", 2, 1), 1, 2,
			102, 3, 14, 0, 98, ikey("c", 3, 1), ikey("d", 4, 1), 3, 4),
			"add-file L1 13 size=99 smallest=a#1,1 largest=b#2,1 seqs=1-2\n" +
				"add-file L3 14 path-id=0 size=98 smallest=c#3,1 largest=d#4,1 seqs=3-4\n", nil},
		{"new-file-4 customs", rec(103, 6, 15, 100, ikey("a", 1, 1), ikey("b", 2, 1), 1, 2,
			2, string([]byte{1}), 6, string(rec(1700000000)), 7, "\xab\xcd", 66, 9, 69, 1, 2, 10, 100, 11, 200, 77, "zz",
			3, "\x0f\x00\x00\x00\x00\x00\x00\x00", 1),
			"add-file L6 15 size=100 smallest=a#1,1 largest=b#2,1 seqs=1-2 need-compaction=1 creation-time=1700000000 " +
				"checksum=abcd virtual-backing=9 blob-depth=1 blob-refs=10:100,11:200 custom-77=7a7a min-log-to-keep=15\n", nil},
		{"new-file-5 range keys", rec(104, 0, 16, 10, byte(0), ikey("a", 5, 21), ikey("c", 5, 21), 5, 5, 1),
			"add-file L0 16 size=10 bounds=0 range-smallest=a#5,21 range-largest=c#5,21 seqs=5-5\n", nil},
		{"new-file-5 both", rec(104, 0, 16, 10, byte(3), ikey("a", 5, 1), ikey("b", 5, 1), ikey("a", 5, 21), ikey("c", 5, 21), 5, 5, 1),
			"add-file L0 16 size=10 bounds=3 smallest=a#5,1 largest=b#5,1 range-smallest=a#5,21 range-largest=c#5,21 seqs=5-5\n", nil},
		{"pebble backing and blobs", rec(105, 20, 4096, 106, 21, 107, 1, 22, 300, 250, 1700000000, 108, 1, 22),
			"add-backing 20 size=4096\ndelete-backing 21\nadd-blob-file id=1 file=22 size=300 value-size=250 creation-time=1700000000\ndelete-blob-file id=1 file=22\n", nil},
		{"rocksdb", rec(10, 4, 200, 2, 201, "meta", 202, 203, 9, 300, 2,
			400, 30, 5, 500, "crc32c", "\x01\x02", 1, 401, 30, 1, 50, 1,
			8193, "db-uuid", 8199, string(rec(17, 2, 4096, 1)), 8200, string(rec(16)), 8196, 18, 1, 8197, 15, 8202, "\x01"),
			"min-log-number-to-keep 4\ncolumn-family 2\nadd-column-family meta\ndrop-column-family\nmax-column-family 9\natomic-group-remaining 2\n" +
				"blob-file-addition file=30 count=5 bytes=500 checksum-method=crc32c checksum=0102\nblob-file-garbage file=30 count=1 bytes=50\n" +
				"db-id db-uuid\nwal-add log=17 synced-size=4096\nwal-delete log=16\nwal-add log=18\nwal-delete log=15\nignorable-tag 8202 01\n", nil},
		{"short internal key", rec(5, 0, "abc"), "compact-pointer L0 abc#short\n", nil},
		{"unknown tag", rec(2, 5, 77, 1, 2), "log-number 5\nunknown-tag 77 at byte 2: 4d0102\n", ErrUnknownTag},
		{"truncated field", rec(2, 5, 7, 0, 12, 1234, "\x01"), "log-number 5\nerror: truncated or malformed add-file at byte 2: 07000cd2090101\n", ErrMalformed},
		{"bad varint", []byte{2, 0x80}, "error: truncated or malformed log-number at byte 0: 0280\n", ErrMalformed},
		{"bad tag varint", []byte{0xff}, "error: bad tag varint at byte 0: ff\n", ErrMalformed},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := AppendVersionEdit(nil, tc.rec)
			if string(got) != tc.want {
				t.Errorf("text:\n%s\nwant:\n%s", got, tc.want)
			}
			if !errors.Is(err, tc.err) || (tc.err == nil) != (err == nil) {
				t.Errorf("err %v, want %v", err, tc.err)
			}
		})
	}
}
