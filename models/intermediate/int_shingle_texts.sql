{#-
  Grain: one row per document.  Why: the text that is shingled (int_fingerprints, exact scoring),
  with body_hash, the hash of that text (incremental builds redo a document when it changes).

  var boilerplate_filter false (the default, the spec): the body itself, a view over stg_documents.
  true: lines that recur on many pages of the same domain (navigation, headers, footers) are left out:
  a line (its text with carriage returns dropped and ASCII spaces trimmed: macro line_key; empty lines
  are ignored) is boilerplate on a domain with at least boilerplate_min_pages distinct bodies when more than
  boilerplate_max_share of those distinct bodies contain it.  Bodies are counted once however many
  pages repeat them, so mirrors and copies on one site never make their own text boilerplate.  A line
  found to be boilerplate on some domain is left out of every page that holds it, so a copy of a page on
  another domain (a mirror) loses the same lines and still matches.  A page whose every line is
  boilerplate keeps its whole body (identical template-only pages still match each other).  Exact Jaccard is then
  that of the filtered shingle sets (docs/quality.md).  A table in that mode: the line statistics are
  read by two models.
-#}
{%- set s = dedup_settings() -%}
{{ config(materialized=("table" if s.boilerplate_filter else "view")) }}

with

documents as (

    select * from {{ ref("stg_documents") }}

),

{% if s.boilerplate_filter -%}
lines as (

    select
        doc_id,
        domain,
        body_hash,
        line_number,
        line,
        {{ line_key("line") }} as line_key
    from (
        select
            doc_id,
            domain,
            body_hash,
            {{ explode_list_with_position(split_lines("body"), "line_number", "line") }}
        from documents
        where body is not null
    ) as exploded

),

domain_texts as (

    select
        domain,
        count(distinct body_hash) as distinct_bodies
    from documents
    where domain is not null
    group by domain

),

line_texts as (

    select
        domain,
        line_key,
        count(distinct body_hash) as bodies_with_line
    from lines
    where line_key <> '' and domain is not null
    group by domain, line_key

),

boilerplate_lines as (

    select distinct line_texts.line_key
    from line_texts
    inner join domain_texts on line_texts.domain = domain_texts.domain
    where
        domain_texts.distinct_bodies >= {{ s.boilerplate_min_pages }}
        and line_texts.bodies_with_line > {{ s.boilerplate_max_share }} * domain_texts.distinct_bodies

),

marked_lines as (

    select
        lines.doc_id,
        lines.line_number,
        lines.line,
        boilerplate_lines.line_key is not null as is_boilerplate
    from lines
    left join boilerplate_lines on lines.line_key = boilerplate_lines.line_key

),

filtered as (

    select
        doc_id,
        count(*) filter (where is_boilerplate) as boilerplate_lines,
        count(*) filter (where not is_boilerplate and {{ line_key("line") }} <> '') as text_lines,
        {{ ordered_string_agg("case when is_boilerplate then '' else line end", "line_number", "chr(10)") }}
            as filtered_body
    from marked_lines
    group by doc_id

),

{% endif -%}
final as (

    {% if s.boilerplate_filter -%}
        select
            documents.doc_id,
            case
                when coalesce(filtered.boilerplate_lines, 0) = 0 or filtered.text_lines = 0 then documents.body
                else filtered.filtered_body
            end as body,
            case
                when coalesce(filtered.boilerplate_lines, 0) = 0 or filtered.text_lines = 0 then documents.body_hash
                else {{ text_hash("filtered.filtered_body") }}
            end as body_hash,
            case
                when filtered.text_lines = 0 then 0 else coalesce(filtered.boilerplate_lines, 0)
            end as boilerplate_lines
        from documents
        left join filtered on documents.doc_id = filtered.doc_id
    {%- else -%}
        -- no filter: every page keeps its body (a plain projection, so a query that needs only doc_id and
        -- body_hash, as an incremental build's search for new pages, reads no body)
        select
            doc_id,
            body,
            body_hash,
            0 as boilerplate_lines
        from documents
    {%- endif %}

)

select * from final
