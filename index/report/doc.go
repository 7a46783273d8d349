// Package report writes what the recfs commands print about a table:
// records chosen by number or by offset ([ParseRanges], [ParseOffsets],
// [Select]); their payloads raw, numbered, as JSON Lines or decoded
// ([Mode], [Mode.WriteDecoded]); the listing of records ([List]); records
// appended while it follows a table ([Follower]); a table's facts
// ([InfoOf]) and the read-back of every record ([Verify]); the lines of a
// listing of a directory or an S3 prefix ([Entry], [EntryWriter]); the
// outputs of a command run on many files, apart ([BlockWriter]) and
// summed up ([Summary]).
//
// It works on an open *index.Table and an io.Writer; opening the table and
// parsing flags is the caller's (fs/open and cmd/recfs).
package report
