package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"strconv"
	"strings"

	"github.com/sluice-hpc/sluice/internal/acct"
)

// table describes how one kind of record maps to a table: its columns
// (the first is the key), the records of a state by key, and how one
// record becomes a row.
type table struct {
	name   string
	cols   []string
	items  func(st *acct.State) map[string]any
	encode func(v any) ([]any, error)
}

var tables = []table{
	{"clusters", []string{"name"}, clusterItems, func(v any) ([]any, error) {
		return []any{v.(*acct.Cluster).Name}, nil
	}},
	{"accounts", []string{"name", "parent", "description", "organization"}, accountItems, func(v any) ([]any, error) {
		a := v.(*acct.Account)
		return []any{a.Name, a.Parent, a.Description, a.Organization}, nil
	}},
	{"users", []string{"name", "default_account", "admin_level"}, userItems, func(v any) ([]any, error) {
		u := v.(*acct.User)
		return []any{u.Name, u.DefaultAccount, int64(u.AdminLevel)}, nil
	}},
	{"qos", []string{"id", "name", "priority", "attrs"}, qosItems, encodeQOS},
	{"assocs", []string{"id", "cluster", "account", "username", "partition_name", "parent_id", "shares", "qos", "default_qos", "priority", "limits"}, assocItems, encodeAssoc},
	{"tres", []string{"id", "type", "name"}, tresItems, func(v any) ([]any, error) {
		t := v.(*acct.TRESRecord)
		return []any{t.ID, t.Type, t.Name}, nil
	}},
	{"meta", []string{"name", "value"}, metaItems, func(v any) ([]any, error) { return v.([]any), nil }},
}

func clusterItems(st *acct.State) map[string]any {
	out := make(map[string]any, len(st.Clusters))
	for n, c := range st.Clusters {
		out[n] = c
	}
	return out
}

func accountItems(st *acct.State) map[string]any {
	out := make(map[string]any, len(st.Accounts))
	for n, a := range st.Accounts {
		out[n] = a
	}
	return out
}

func userItems(st *acct.State) map[string]any {
	out := make(map[string]any, len(st.Users))
	for n, u := range st.Users {
		out[n] = u
	}
	return out
}

func qosItems(st *acct.State) map[string]any {
	out := make(map[string]any, len(st.QOS))
	for _, q := range st.QOS {
		out[strconv.FormatInt(q.ID, 10)] = q
	}
	return out
}

func assocItems(st *acct.State) map[string]any {
	out := make(map[string]any, len(st.Assocs))
	for id, a := range st.Assocs {
		out[strconv.FormatInt(id, 10)] = a
	}
	return out
}

func tresItems(st *acct.State) map[string]any {
	out := make(map[string]any, len(st.TRES))
	for _, t := range st.TRES {
		out[strconv.FormatInt(t.ID, 10)] = t
	}
	return out
}

func metaItems(st *acct.State) map[string]any {
	return map[string]any{
		"last_assoc_id": []any{"last_assoc_id", st.LastAssocID},
		"last_qos_id":   []any{"last_qos_id", st.LastQOSID},
	}
}

func encodeQOS(v any) ([]any, error) {
	q := v.(*acct.QOS)
	attrs, err := json.Marshal(q)
	if err != nil {
		return nil, fmt.Errorf("encode QOS %s: %w", q.Name, err)
	}
	return []any{q.ID, q.Name, q.Priority, string(attrs)}, nil
}

func encodeAssoc(v any) ([]any, error) {
	a := v.(*acct.Association)
	limits, err := json.Marshal(a.AssocLimits)
	if err != nil {
		return nil, fmt.Errorf("encode association %d: %w", a.ID, err)
	}
	var qos any // NULL: inherit from the parent
	if a.QOS != nil {
		qos = strings.Join(a.QOS, ",")
	}
	return []any{a.ID, a.Cluster, a.Account, a.User, a.Partition, a.ParentID, a.Shares,
		qos, a.DefaultQOS, int64(a.Priority), string(limits)}, nil
}

// writeDiff writes what changed from old to cur: deleted and changed rows
// are deleted first, then new and changed rows inserted, so unique keys
// never collide mid-way. Records are compared before encoding, so an
// update costs in proportion to what changed.
func (s *Store) writeDiff(ctx context.Context, tx *sql.Tx, old, cur *acct.State) error {
	for _, t := range tables {
		if err := s.writeTable(ctx, tx, t, t.items(old), t.items(cur)); err != nil {
			return fmt.Errorf("write %s: %w", t.name, err)
		}
	}
	return nil
}

func (s *Store) writeTable(ctx context.Context, tx *sql.Tx, t table, before, after map[string]any) error {
	var gone, put []string
	for k, v := range before {
		if nv, ok := after[k]; !ok || !reflect.DeepEqual(nv, v) {
			gone = append(gone, k)
		}
	}
	for k, v := range after {
		if ov, ok := before[k]; !ok || !reflect.DeepEqual(ov, v) {
			put = append(put, k)
		}
	}
	if len(gone) == 0 && len(put) == 0 {
		return nil
	}
	sort.Strings(gone)
	sort.Strings(put)
	del := s.rebind(fmt.Sprintf("DELETE FROM %s WHERE %s = ?", t.name, t.cols[0]))
	for _, k := range gone {
		row, err := t.encode(before[k])
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, del, row[0]); err != nil {
			return err
		}
	}
	ins := s.rebind(fmt.Sprintf("INSERT INTO %s (%s) VALUES (%s)", t.name, strings.Join(t.cols, ", "),
		strings.TrimSuffix(strings.Repeat("?, ", len(t.cols)), ", ")))
	for _, k := range put {
		row, err := t.encode(after[k])
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, ins, row...); err != nil {
			return err
		}
	}
	return nil
}

// readState reads the whole accounting state.
func (s *Store) readState(ctx context.Context, tx *sql.Tx) (*acct.State, error) {
	st := emptyState()
	steps := []func(context.Context, *sql.Tx, *acct.State) error{
		readClusters, readAccounts, readUsers, readQOS, readAssocs, readTRES, readMeta,
	}
	for _, f := range steps {
		if err := f(ctx, tx, st); err != nil {
			return nil, err
		}
	}
	return st, nil
}

// each runs q and calls scan for every row.
func each(ctx context.Context, tx *sql.Tx, q string, scan func(*sql.Rows) error) error {
	rows, err := tx.QueryContext(ctx, q)
	if err != nil {
		return fmt.Errorf("%s: %w", q, err)
	}
	defer rows.Close()
	for rows.Next() {
		if err := scan(rows); err != nil {
			return fmt.Errorf("%s: %w", q, err)
		}
	}
	return rows.Err()
}

func readClusters(ctx context.Context, tx *sql.Tx, st *acct.State) error {
	return each(ctx, tx, "SELECT name FROM clusters", func(r *sql.Rows) error {
		var c acct.Cluster
		if err := r.Scan(&c.Name); err != nil {
			return err
		}
		st.Clusters[c.Name] = &c
		return nil
	})
}

func readAccounts(ctx context.Context, tx *sql.Tx, st *acct.State) error {
	return each(ctx, tx, "SELECT name, parent, description, organization FROM accounts", func(r *sql.Rows) error {
		var a acct.Account
		if err := r.Scan(&a.Name, &a.Parent, &a.Description, &a.Organization); err != nil {
			return err
		}
		st.Accounts[a.Name] = &a
		return nil
	})
}

func readUsers(ctx context.Context, tx *sql.Tx, st *acct.State) error {
	return each(ctx, tx, "SELECT name, default_account, admin_level FROM users", func(r *sql.Rows) error {
		var u acct.User
		var lvl int64
		if err := r.Scan(&u.Name, &u.DefaultAccount, &lvl); err != nil {
			return err
		}
		u.AdminLevel = acct.AdminLevel(lvl)
		st.Users[u.Name] = &u
		return nil
	})
}

func readQOS(ctx context.Context, tx *sql.Tx, st *acct.State) error {
	return each(ctx, tx, "SELECT id, name, priority, attrs FROM qos", func(r *sql.Rows) error {
		var id, prio int64
		var name, attrs string
		if err := r.Scan(&id, &name, &prio, &attrs); err != nil {
			return err
		}
		q := acct.NewQOS(name)
		if err := json.Unmarshal([]byte(attrs), q); err != nil {
			return fmt.Errorf("decode QOS %s: %w", name, err)
		}
		q.ID, q.Name, q.Priority = id, name, prio
		st.QOS[name] = q
		return nil
	})
}

func readAssocs(ctx context.Context, tx *sql.Tx, st *acct.State) error {
	q := "SELECT id, cluster, account, username, partition_name, parent_id, shares, qos, default_qos, priority, limits FROM assocs"
	return each(ctx, tx, q, func(r *sql.Rows) error {
		a := &acct.Association{AssocLimits: acct.NoAssocLimits()}
		var qos sql.NullString
		var prio int64
		var limits string
		if err := r.Scan(&a.ID, &a.Cluster, &a.Account, &a.User, &a.Partition, &a.ParentID, &a.Shares,
			&qos, &a.DefaultQOS, &prio, &limits); err != nil {
			return err
		}
		if qos.Valid {
			a.QOS = []string{}
			if qos.String != "" {
				a.QOS = strings.Split(qos.String, ",")
			}
		}
		a.Priority = acct.Limit(prio)
		if err := json.Unmarshal([]byte(limits), &a.AssocLimits); err != nil {
			return fmt.Errorf("decode association %d: %w", a.ID, err)
		}
		st.Assocs[a.ID] = a
		return nil
	})
}

func readTRES(ctx context.Context, tx *sql.Tx, st *acct.State) error {
	return each(ctx, tx, "SELECT id, type, name FROM tres", func(r *sql.Rows) error {
		var t acct.TRESRecord
		if err := r.Scan(&t.ID, &t.Type, &t.Name); err != nil {
			return err
		}
		st.TRES[t.Key()] = &t
		return nil
	})
}

func readMeta(ctx context.Context, tx *sql.Tx, st *acct.State) error {
	return each(ctx, tx, "SELECT name, value FROM meta", func(r *sql.Rows) error {
		var n string
		var v int64
		if err := r.Scan(&n, &v); err != nil {
			return err
		}
		switch n {
		case "last_assoc_id":
			st.LastAssocID = v
		case "last_qos_id":
			st.LastQOSID = v
		}
		return nil
	})
}
