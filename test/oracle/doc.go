// Package oracle is Sluice's differential suite: scenarios written once as
// terminal sessions (scenarios/*.scn), played on real Slurm 24.11 (the
// oracle of ../shared/oracle) and on `sluice up` with the same slurm.conf
// and users, compared point by point (each command's stdout, stderr and
// exit status) after normalising what must differ (timestamps, paths, uids,
// host names).
//
// The oracle's outputs are committed as golden files (golden/*.golden),
// written only by `make oracle-record`; `make test` plays every scenario on
// Sluice and compares with them, so CI needs no Slurm; `make oracle-diff`
// plays both live. Points that differ on purpose or by a known bug are
// listed in differences.txt with their reason (a docs/differences.md
// section or an issue); any other difference fails the test.
package oracle
