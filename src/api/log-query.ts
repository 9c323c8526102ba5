// The client's options for reading logs; it turns them into the query string of the logs endpoint.

/** The filters of the logs endpoint; `typeFilter` becomes repeated `type_filter` parameters. */
export interface LogQuery {
  limit?: number;
  offset?: number;
  typeFilter?: readonly string[];
  search?: string;
  /** ISO-8601 time, or a Date. */
  after?: string | Date;
  before?: string | Date;
}
