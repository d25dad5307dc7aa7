{#-
  exact_jaccard(pairs, shingle_sets=none): a select of
  (low_doc_id, high_doc_id, shared_shingles, union_shingles, jaccard) for every row of `pairs`
  (columns low_doc_id, high_doc_id), from the shingle sets in `shingle_sets` (doc_id, shingle_count,
  shingle_set, each set its distinct hashes in ascending order), by default those of the pairs'
  documents' texts (DuckDB: webdedup_pair_intersections, a document without text is an error naming it)
  or int_shingle_sets (Spark).  Jaccard of two empty sets is 0.0.  union = |A| + |B| - shared, so only
  the intersection size differs by engine.
-#}
{% macro exact_jaccard(pairs, shingle_sets=none) %}
    {{- return(adapter.dispatch("exact_jaccard", "web_text_dedup")(pairs, shingle_sets)) -}}
{% endmacro %}

{#-
  DuckDB: the pairs (int_member_jaccards' member-to-representative pairs that were not candidates,
  clustering strict's) go to webdedup_pair_intersections (registry webdedup/engines/udfs.py) as one list,
  and are counted as int_anchor_intersections counts the candidate pairs: their documents' texts shingled
  into a scratch file, each pair one compiled merge, about var jaccard_block_mb of sets in memory.  Held as
  lists in this query, the sets of 18,599 pages of 60 KB took more than DuckDB's 2.7 GB.  Given
  shingle_sets (the audit's prefixes, explain_pair's few sets), each pair's two sorted sets are merged
  by webdedup_shared_shingles.  The candidate pairs go through candidate_anchor_jaccard below.
-#}
{% macro duckdb__exact_jaccard(pairs, shingle_sets) %}
    {%- if shingle_sets is none and exact_jaccard_in_scratch() %}
    with
    jaccard_pair_counts as (
        select unnest(webdedup_pair_intersections(
            (select list({'low_doc_id': low_doc_id, 'high_doc_id': high_doc_id}) from {{ pairs }}),
            {% for relation in exact_jaccard_inputs() %}{{ sql_string(relation | string) }}, {% endfor %}
            {{ sql_string(var("jaccard_block_mb") | string) }}
        ), recursive := true)
    ),
    jaccard_counts as (
        select
            p.low_doc_id,
            p.high_doc_id,
            c.both_counts,
            c.shared_shingles
        from {{ pairs }} as p
        inner join jaccard_pair_counts as c on p.low_doc_id = c.low_doc_id and p.high_doc_id = c.high_doc_id
    )
    {{ duckdb__jaccard_from_counts("jaccard_counts") }}
    {%- else %}
    {%- if shingle_sets is none -%}
        {%- set shingle_sets = shingle_sets_source(
            "select low_doc_id from " ~ pairs ~ " union select high_doc_id from " ~ pairs) -%}
    {%- endif %}
    with
    jaccard_sets as (
        select
            doc_id,
            shingle_count,
            shingle_set
        from {{ shingle_sets }}
        where doc_id in (
            select low_doc_id from {{ pairs }}
            union
            select high_doc_id from {{ pairs }}
        )
    ),
    jaccard_counts as (
        select
            p.low_doc_id,
            p.high_doc_id,
            l.shingle_count + r.shingle_count as both_counts,
            webdedup_shared_shingles(l.shingle_set, r.shingle_set) as shared_shingles
        from {{ pairs }} as p
        inner join jaccard_sets as l on p.low_doc_id = l.doc_id
        inner join jaccard_sets as r on p.high_doc_id = r.doc_id
    )
    {{ duckdb__jaccard_from_counts("jaccard_counts") }}
    {%- endif %}
{% endmacro %}

{#- Whether exact_jaccard without shingle_sets counts in the scratch file (webdedup_pair_intersections, which
    reads the tables by name on a connection of its own).  A unit test overrides it to false: its inputs
    are fixtures inside the query, which that connection cannot see, so it gets the list merge over
    shingle_sets_source (the same counts, tests/python/unit/test_anchor_scoring.py). -#}
{% macro exact_jaccard_in_scratch() %}{{ return(true) }}{% endmacro %}

{#- The relations exact_jaccard reads without shingle_sets (a model that scores pairs only while it runs,
    clustering: strict, names them in a depends_on comment).  DuckDB: the texts, the groups sizing the
    scratch file's partitions and the run's settings, in webdedup_pair_intersections' order. -#}
{% macro exact_jaccard_inputs() %}
    {{- return(adapter.dispatch("exact_jaccard_inputs", "web_text_dedup")()) -}}
{% endmacro %}

{% macro duckdb__exact_jaccard_inputs() %}
    {{- return([shingle_sets_ref(), ref("int_shingle_set_groups"), ref("int_run_settings")]) -}}
{% endmacro %}

{% macro default__exact_jaccard_inputs() %}{{ return([shingle_sets_ref()]) }}{% endmacro %}

{#- (low_doc_id, high_doc_id, shared_shingles, union_shingles, jaccard) from both set sizes and the shared count. -#}
{% macro duckdb__jaccard_from_counts(counts) %}
    select
        low_doc_id,
        high_doc_id,
        shared_shingles,
        both_counts - shared_shingles as union_shingles,
        case
            when both_counts = shared_shingles then 0.0
            else shared_shingles / (both_counts - shared_shingles)
        end as jaccard
    from {{ counts }}
{% endmacro %}

{#-
  Other engines (Spark): the intersection is an equi-join on (document, shingle hash) rows, not a
  per-pair list intersection: on 100k pairs of 500-hash sets the join took 2.5 s where list_intersect
  took 28 s.  The pairs' left shingles are materialized first: left alone, DuckDB's optimizer (which
  cannot estimate an unnest) joined the two shingle lists on the hash alone first, 1.4 billion rows at
  100k pages instead of 13 million.  By default the whole int_shingle_sets table is joined (the joins
  below keep the pairs' documents): given the pairs' sets filtered beforehand (an IN subquery), Spark
  chose to broadcast them and the standalone cluster's driver ran out of memory building the broadcast.
-#}
{% macro default__exact_jaccard(pairs, shingle_sets) %}
    {%- if shingle_sets is none -%}{%- set shingle_sets = shingle_sets_ref() -%}{%- endif %}
    with
    jaccard_docs as (
        -- 8-byte keys: the row-per-shingle stages below carry them, not two doc_id strings.  A 63-bit hash
        -- of the doc_id, computed in parallel (a dense row_number() over the whole set ran in one task);
        -- jaccard_key_check stops the query should two documents ever share a key.
        select
            doc_id,
            {{ text_hash("doc_id") }} as doc_key
        from (
            select low_doc_id as doc_id from {{ pairs }}
            union
            select high_doc_id as doc_id from {{ pairs }}
        ) as pair_documents
    ),
    jaccard_key_check as (
        select count(*) - count(distinct doc_key) as colliding_keys from jaccard_docs
    ),
    jaccard_pairs as (
        select
            p.low_doc_id,
            p.high_doc_id,
            low_key.doc_key as low_key,
            high_key.doc_key as high_key
        from {{ pairs }} as p
        inner join jaccard_docs as low_key on p.low_doc_id = low_key.doc_id
        inner join jaccard_docs as high_key on p.high_doc_id = high_key.doc_id
    ),
    jaccard_shingles as (
        select
            jaccard_docs.doc_key,
            {{ explode_list("fp.shingle_set", "shingle") }}
        from {{ shingle_sets }} as fp
        inner join jaccard_docs on fp.doc_id = jaccard_docs.doc_id
    ),
    jaccard_left_rows as {{ materialized_cte() }} (
        select
            jp.low_key,
            jp.high_key,
            l.shingle
        from jaccard_pairs as jp
        inner join jaccard_shingles as l on jp.low_key = l.doc_key
    ),
    jaccard_intersections as (
        select
            lr.low_key,
            lr.high_key,
            count(*) as shared_shingles
        from jaccard_left_rows as lr
        inner join jaccard_shingles as r on lr.high_key = r.doc_key and lr.shingle = r.shingle
        group by lr.low_key, lr.high_key
    ),
    jaccard_counts as (
        select
            jp.low_doc_id,
            jp.high_doc_id,
            coalesce(i.shared_shingles, 0) as shared_shingles,
            l.shingle_count + r.shingle_count - coalesce(i.shared_shingles, 0) as union_shingles
        from jaccard_pairs as jp
        inner join {{ shingle_sets }} as l on jp.low_doc_id = l.doc_id
        inner join {{ shingle_sets }} as r on jp.high_doc_id = r.doc_id
        left join jaccard_intersections as i
            on jp.low_key = i.low_key and jp.high_key = i.high_key
    )
    select
        jaccard_counts.low_doc_id,
        jaccard_counts.high_doc_id,
        jaccard_counts.shared_shingles,
        jaccard_counts.union_shingles,
        case
            when jaccard_key_check.colliding_keys > 0
                then cast({{ raise_error("'exact_jaccard: two documents share a 63-bit doc_id hash key'") }} as double)
            when jaccard_counts.union_shingles = 0 then 0.0
            else jaccard_counts.shared_shingles / jaccard_counts.union_shingles
        end as jaccard
    from jaccard_counts
    cross join jaccard_key_check
{% endmacro %}


{#-
  shingle_sets_source(doc_ids): a relation (doc_id, shingle_count, shingle_set) of the shingle sets of
  the documents the query `doc_ids` (one column of doc_ids) selects.  DuckDB: computed as they are read,
  from the shingled text (int_shingle_texts) by the Arrow function webdedup_shingle_set, for those
  documents only (the audit's anchors, explain_pair's two pages): the sets of
  every candidate anchor would be the largest table of the database (8 bytes per shingle, random), and
  the candidate pairs are counted by int_anchor_intersections over sets it holds only while it runs.
  Spark: those rows of the int_shingle_sets table.
-#}
{% macro shingle_sets_source(doc_ids) %}
    {{- return(adapter.dispatch("shingle_sets_source", "web_text_dedup")(doc_ids)) -}}
{% endmacro %}

{% macro duckdb__shingle_sets_source(doc_ids) %}
    (
        select
            doc_id,
            cast(len(shingle_set) as integer) as shingle_count,
            shingle_set
        from (
            -- the filter sits below the function: DuckDB does not push a semi join past it
            select
                doc_id,
                webdedup_shingle_set(body, {{ dedup_settings().shingle_size }}) as shingle_set
            from {{ shingle_sets_ref() }}
            where doc_id in ({{ doc_ids }})
        ) as shingled
    )
{% endmacro %}

{% macro default__shingle_sets_source(doc_ids) %}
    (select * from {{ shingle_sets_ref() }} where doc_id in ({{ doc_ids }}))
{% endmacro %}

{#- The model shingle_sets_source reads: DuckDB's shingled text, Spark's stored sets.  A model that
    scores pairs only while it runs (clustering: strict) names it in a depends_on comment. -#}
{% macro shingle_sets_ref() %}
    {{- return(adapter.dispatch("shingle_sets_ref", "web_text_dedup")()) -}}
{% endmacro %}

{% macro duckdb__shingle_sets_ref() %}{{ return(ref("int_shingle_texts")) }}{% endmacro %}

{% macro default__shingle_sets_ref() %}{{ return(ref("int_shingle_sets")) }}{% endmacro %}


{#-
  candidate_anchor_jaccard(pairs): exact_jaccard's columns for scored_pairs' distinct candidate anchor
  pairs (`pairs`: low_doc_id, high_doc_id, the distinct least/greatest of int_candidate_pairs' two
  anchors).  On DuckDB the pairs of two anchors are counted by int_anchor_intersections, a blocked merge
  whose memory does not grow with the corpus (joining every pair to both of its sets in SQL spilled tens
  of GB at 5M pages), and a pair inside a group of identical sets shares all of its shingles; the other
  engines use exact_jaccard on the same pairs.
-#}
{% macro candidate_anchor_jaccard(pairs) %}
    {{- return(adapter.dispatch("candidate_anchor_jaccard", "web_text_dedup")(pairs)) -}}
{% endmacro %}

{% macro duckdb__candidate_anchor_jaccard(pairs) %}
    with
    jaccard_counts as (
        select
            low_doc_id,
            high_doc_id,
            low_shingle_count + high_shingle_count as both_counts,
            shared_shingles
        from {{ ref("int_anchor_intersections") }}
        union all
        select
            doc_id as low_doc_id,
            doc_id as high_doc_id,
            2 * shingle_count as both_counts,
            shingle_count as shared_shingles
        from {{ ref("int_shingle_set_groups") }}
        where is_anchor and group_size > 1
    )
    {{ duckdb__jaccard_from_counts("jaccard_counts") }}
{% endmacro %}

{% macro default__candidate_anchor_jaccard(pairs) %}
    {{- exact_jaccard(pairs) -}}
{% endmacro %}
