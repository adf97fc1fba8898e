-- 0003: taken by the audit table (issue 9), which is merged from its own
-- branch; this file only keeps the versions contiguous until then and is
-- dropped when the real 0003 arrives.
SELECT 1;
