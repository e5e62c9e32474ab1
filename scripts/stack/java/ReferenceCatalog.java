// Runs Iceberg's reference REST catalog (RESTCatalogServer from iceberg-open-api's test fixtures)
// bound to one address: the fixture's own main listens on every interface. Configured as the
// fixture is, by CATALOG_* environment variables (CATALOG_URI, CATALOG_WAREHOUSE, CATALOG_IO__IMPL,
// CATALOG_S3_*); the address comes from REST_HOST and REST_PORT. Run as a source file:
//   java -cp '<jars>/*' ReferenceCatalog.java
import java.lang.reflect.Constructor;
import java.lang.reflect.Method;
import org.apache.iceberg.rest.RESTCatalogAdapter;
import org.apache.iceberg.rest.RESTCatalogServlet;
import org.eclipse.jetty.ee10.servlet.ServletContextHandler;
import org.eclipse.jetty.ee10.servlet.ServletHolder;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;

public class ReferenceCatalog {
  public static void main(String[] args) throws Exception {
    String host = System.getenv().getOrDefault("REST_HOST", "127.0.0.1");
    int port = Integer.parseInt(System.getenv().getOrDefault("REST_PORT", "8181"));

    // The fixture builds its catalog and adapter in package-private code: reuse it as it is.
    Class<?> serverClass = Class.forName("org.apache.iceberg.rest.RESTCatalogServer");
    Constructor<?> serverInit = serverClass.getDeclaredConstructor();
    serverInit.setAccessible(true);
    Method backend = serverClass.getDeclaredMethod("initializeBackendCatalog");
    backend.setAccessible(true);
    Object context = backend.invoke(serverInit.newInstance());
    Class<?> adapterClass = Class.forName("org.apache.iceberg.rest.RESTServerCatalogAdapter");
    Constructor<?> adapterInit = adapterClass.getDeclaredConstructor(context.getClass());
    adapterInit.setAccessible(true);
    RESTCatalogAdapter adapter = (RESTCatalogAdapter) adapterInit.newInstance(context);

    ServletContextHandler handler = new ServletContextHandler(ServletContextHandler.NO_SESSIONS);
    handler.addServlet(new ServletHolder(new RESTCatalogServlet(adapter)), "/*");
    Server server = new Server();
    ServerConnector connector = new ServerConnector(server);
    connector.setHost(host);
    connector.setPort(port);
    server.addConnector(connector);
    server.setHandler(handler);
    server.start();
    server.join();
  }
}
