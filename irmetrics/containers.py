"""TEMPORARY stand-in until the io branch lands (same interface, minimal)."""
import polars as pl


class Qrels:
    def __init__(self, df, path=None):
        self.df, self.path = df, path

    @classmethod
    def from_dict(cls, d):
        rows = [(str(q), "0", str(doc), int(rel)) for q, docs in d.items() for doc, rel in docs.items()]
        return cls(pl.DataFrame(rows, schema={"query_id": pl.String, "iteration": pl.String,
                                              "doc_id": pl.String, "relevance": pl.Int64}, orient="row"))

    @classmethod
    def from_df(cls, df):
        return cls(df.select("query_id", "iteration", "doc_id", "relevance"))

    def to_dict(self):
        out = {}
        for q, doc, rel in self.df.select("query_id", "doc_id", "relevance").iter_rows():
            out.setdefault(q, {})[doc] = int(rel)
        return out


class Run:
    def __init__(self, df, name="irmetrics", path=None):
        self.df, self.name, self.path = df, name, path

    @classmethod
    def from_dict(cls, d, *, name="irmetrics"):
        rows = [(str(q), "Q0", str(doc), None, float(s), name) for q, docs in d.items() for doc, s in docs.items()]
        return cls(pl.DataFrame(rows, schema={"query_id": pl.String, "iteration": pl.String,
                                              "doc_id": pl.String, "rank": pl.Int64,
                                              "score": pl.Float64, "run_id": pl.String}, orient="row"), name)

    @classmethod
    def from_df(cls, df, *, name="irmetrics"):
        return cls(df.select("query_id", "iteration", "doc_id", "rank", "score", "run_id"), name)

    def to_dict(self):
        out = {}
        for q, doc, score in self.df.select("query_id", "doc_id", "score").iter_rows():
            out.setdefault(q, {})[doc] = float(score)
        return out
