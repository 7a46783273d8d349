// Package decode is the seam every record decoder plugs into: the one
// way cat, mount (file and directory mounts, local and S3, followed or
// not) and any later front end (recfs serve, a Beam IO) turn a record's
// bytes into text a user can read and grep. It is pure: it reads records
// through the small [Records] interface and files beside a source through
// [Dir], never the operating system.
//
// The pieces:
//
//   - A [Decoder] renders one [Record] (its number, its payload and the
//     [Meta] its format keeps beside the payload) into a [Writer], as
//     text lines or as JSON Lines ([Output]). A record the decoder does
//     not fit is an error made with [Misfit]: cat exits non-zero, a mount
//     answers EIO for that record and logs one line.
//   - A [Learner] is a decoder with state built from earlier records (a
//     Prometheus WAL's series labels, a MANIFEST's live files); a
//     [Summarizer] renders that state after the last record.
//   - A [Session] drives one decoder over one source: it reads records
//     within a size budget, feeds a Learner its earlier records in order
//     (lazily: a mount that reads record 900 first learns 0 to 899 first,
//     once), and labels what the decoder writes.
//   - Package codec/decoders holds the registry: the decoders by name,
//     their flags' parameters, and the choice of a decoder by content
//     (--decode auto).
//
// # Writing a decoder
//
// A decoder is one package below codec (codec/NAMEdecode or the format's
// own package) and one line in codec/decoders/registry.go. Step by step:
//
//  1. Write the pure function of the bytes: func(w *decode.Writer, rec
//     *decode.Record) error. Write every line with w.Begin (or BeginSeq
//     when the format numbers what the line shows: a WAL batch's sequence
//     number, a Kafka offset), then the line's content, then w.End. In
//     text mode (w.JSON() false) write the content as text; in JSON mode
//     write fields with w.Key and the Append helpers (AppendJSONBytes
//     renders bytes as a JSON string when they are UTF-8, else as the
//     marked form {"base64":"..."}); Begin already wrote "n" (the record
//     number) and "seq". Never keep rec.Payload after the call.
//  2. Refuse what does not fit: return decode.Misfit(at, "why") where the
//     bytes stop making sense. Whether the lines written before the
//     fault stay is the decoder's choice, documented with it: cat writes
//     them before its error; a mount shows none of them (EIO).
//  3. Keep the output linear in the record: at most a constant factor of
//     the payload plus a constant, so that a hostile record stays within
//     the renderer's budget (see MaxOutput). Limit nesting.
//  4. Per-record metadata comes in rec.Meta: a format whose table keeps
//     fields beside the payload (Kafka: offset, timestamp, key, headers)
//     fills it through the optional [MetaReader] interface of its
//     Records (index.Table, delegating to its format driver).
//  5. State across records: implement [Learner]. Learn is called for the
//     records of the source in order, 0, 1, 2, ..., each once, never
//     concurrently with another Learn; before Decode(n) every record
//     before n has been learned (later ones may have been too: a mount
//     reads in any order). So that a record renders the same whatever was
//     read before it (its size in ls -l must not change), Decode(n) must
//     use only what records before n taught: remember with each entry the
//     record it came from and ignore entries from n on. Bound the state
//     by [Env.Budget] and, past it, stop learning deterministically (the
//     same records are forgotten whatever the order of reads) and say so
//     in the output. Reset drops the state when the source was replaced.
//     A state that spans several files (a WAL's segments) reads the
//     earlier files through [Env.Dir] and may share itself between the
//     sessions of sibling files with [Env.Shared].
//  6. A summary of the state after the last record (a MANIFEST's live
//     LSM tree) is a [Summarizer]: cat writes it after the last record;
//     a mount serves it as the record directory's unlisted .recfs-summary
//     file, so that grep -r still sees records only.
//  7. Detection for --decode auto: a func([][]byte) bool that says
//     whether the first records of a source are certainly this format
//     (they all decode without error and are not trivially empty).
//  8. Register it: one Entry in codec/decoders/registry.go with its name,
//     help line, constructor, detector and the framing formats it applies
//     to. Write a fuzz target over Decode in both output modes and a
//     table test; add a README section.
package decode
