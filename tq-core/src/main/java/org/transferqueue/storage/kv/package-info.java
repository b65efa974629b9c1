/**
 * Key-value storage: {@link org.transferqueue.storage.kv.KvStorageManager} stores every cell of a
 * batch under its own key ({@code "<global index>@<field>"}) through a {@link
 * org.transferqueue.storage.kv.KvClient}, and rebuilds columns of the kind recorded in the schema
 * on read.
 */
package org.transferqueue.storage.kv;
