package acct

// tresVec is the type of every TRES limit: internal/tres's Vector
// (`map[string]int64` keyed by canonical TRES names). It is spelled as the
// plain map until package tres lands, so values of tres.Vector assign to
// these fields and back without conversion.
type tresVec = map[string]int64
